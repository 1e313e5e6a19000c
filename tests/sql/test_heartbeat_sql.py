"""sql/heartbeat.sql, the T-SQL a DBA runs for a quiet database: it parses as T-SQL (sqlfluff's
tsql grammar; no SQL Server runs here), and it makes what the engine and the docs count on:
the one-row table dbo.cdc_heartbeat, its capture instance dbo_cdc_heartbeat (the one
`mssql-cdc tables` leaves out, tests/cli/test_tables.py), and an Agent job every 10 seconds."""

import re
from pathlib import Path

from sqlfluff.core import Linter

SCRIPT = Path(__file__).resolve().parents[2] / "sql" / "heartbeat.sql"


def test_it_parses_as_t_sql():
    parsed = Linter(dialect="tsql").parse_string(SCRIPT.read_text())
    assert parsed.violations == []
    broken = Linter(dialect="tsql").parse_string(SCRIPT.read_text().replace("IF NOT EXISTS (SELECT", "IF NOT EXISTS (("))
    assert broken.violations  # the check can fail


def test_it_makes_the_table_the_instance_and_the_job():
    text = SCRIPT.read_text()
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    assert "CREATE TABLE dbo.cdc_heartbeat" in code and "CHECK (id = 1)" in code
    assert re.search(r"@capture_instance = N'dbo_cdc_heartbeat'", code)
    assert re.search(r"@source_name = N'cdc_heartbeat'", code)
    assert "@freq_subday_type = 2" in code and "@freq_subday_interval = 10" in code
    assert "UPDATE dbo.cdc_heartbeat SET beat_at = SYSUTCDATETIME() WHERE id = 1;" in code
    # Each step is guarded, so that running it again changes nothing.
    assert code.count("IF NOT EXISTS") == 2 and "IF OBJECT_ID(N'dbo.cdc_heartbeat', N'U') IS NULL" in code
