// The engine's phase log. When the environment variable MSSQL_CDC_PHASE_LOG names a file, each
// step after which a crash leaves a distinct state on disk appends one line to it: the stream's
// capture instance, then what the step belongs to, then the step ("dbo_orders batch 7
// bronze_appended", "dbo_customers wave 3 in_bronze"), with one write(2) each, so that a process killed at
// any moment has left every line it reached. Crash tests read it to know in which phase each
// kill landed. When MSSQL_CDC_PHASE_PAUSE names a step too, the thread that reaches it stops
// there, after its line, for good: a crash test kills the process at exactly that step while
// the process's other streams are wherever they are. Both are for tests; without them a note
// costs one check of a flag read once.
#pragma once

#include <string_view>

namespace mssql_cdc {

void NotePhase(std::string_view line);

}  // namespace mssql_cdc
