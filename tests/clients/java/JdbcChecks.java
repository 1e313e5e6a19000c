// Microsoft's JDBC driver against `mssql-cdc sim serve`: what an application or a CDC client
// does with a connection, each step checked against what SQL Server answers. Run by
// tests/clients/test_jdbc.py, which made the database:
//
//   java JdbcChecks <jdbc url> <capture instance> <min LSN as 0x hex> <change rows of the instance>
//
// Prints "ok <step>" per step and exits 0; the first step that does not hold throws, and the
// program exits 1 with the reason.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.Objects;

public class JdbcChecks {
  private final Connection connection;

  private JdbcChecks(Connection connection) {
    this.connection = connection;
  }

  public static void main(String[] args) throws Exception {
    try (Connection connection = DriverManager.getConnection(args[0])) {
      JdbcChecks checks = new JdbcChecks(connection);
      checks.server();
      checks.preparedStatements(args[1], args[2], Integer.parseInt(args[3]));
      checks.catalogQueries(args[1]);
      checks.metadata();
      checks.transactions();
      checks.errors();
      checks.valid();
    }
  }

  private static void expect(boolean holds, String what) {
    if (!holds) throw new AssertionError(what);
  }

  private static void ok(String step) {
    System.out.println("ok " + step);
  }

  private Object scalar(String sql) throws SQLException {
    try (Statement statement = connection.createStatement();
         ResultSet rows = statement.executeQuery(sql)) {
      expect(rows.next(), sql + ": no row");
      Object value = rows.getObject(1);
      expect(!rows.next(), sql + ": more than one row");
      return value;
    }
  }

  private int transactionCount() throws SQLException {
    return ((Number) scalar("SELECT @@TRANCOUNT")).intValue();
  }

  void server() throws SQLException {
    String version = (String) scalar("SELECT @@VERSION");
    expect(version.startsWith("Microsoft SQL Server"), "@@VERSION: " + version);
    String product = connection.getMetaData().getDatabaseProductVersion();
    expect(product.startsWith("16."), "product version: " + product);
    expect("sim".equals(connection.getCatalog()), "catalog: " + connection.getCatalog());
    ok("server");
  }

  // sp_executesql the first time, sp_prepexec then sp_execute on its handle after.
  void preparedStatements(String instance, String minLsn, int changeRows) throws SQLException {
    byte[] expectedMin = HexFormat.of().parseHex(minLsn.substring(2));
    try (PreparedStatement min = connection.prepareStatement("SELECT sys.fn_cdc_get_min_lsn(?)")) {
      for (int run = 0; run < 3; ++run) {
        min.setString(1, instance);
        try (ResultSet rows = min.executeQuery()) {
          expect(rows.next(), "min LSN: no row");
          expect(java.util.Arrays.equals(rows.getBytes(1), expectedMin),
                 "min LSN run " + run + ": " + HexFormat.of().formatHex(rows.getBytes(1)));
        }
      }
      min.setString(1, "no_such_instance");
      try (ResultSet rows = min.executeQuery()) {
        expect(rows.next(), "min LSN of an unknown instance: no row");
        expect(java.util.Arrays.equals(rows.getBytes(1), new byte[10]),
               "the min LSN of an unknown instance is ten zero bytes");
      }
    }
    byte[] maxLsn = (byte[]) scalar("SELECT sys.fn_cdc_get_max_lsn()");
    String all = "SELECT * FROM cdc.fn_cdc_get_all_changes_" + instance + "(?, ?, N'all update old')";
    try (PreparedStatement changes = connection.prepareStatement(all)) {
      changes.setBytes(1, expectedMin);
      changes.setBytes(2, maxLsn);
      try (ResultSet rows = changes.executeQuery()) {
        ResultSetMetaData columns = rows.getMetaData();
        expect("__$start_lsn".equals(columns.getColumnName(1)), "first column " + columns.getColumnName(1));
        expect("binary".equals(columns.getColumnTypeName(1)) && columns.getPrecision(1) == 10,
               "__$start_lsn is " + columns.getColumnTypeName(1) + "(" + columns.getPrecision(1) + ")");
        int count = 0;
        byte[] previous = null;
        while (rows.next()) {
          ++count;
          int operation = rows.getInt("__$operation");
          expect(operation >= 1 && operation <= 4, "operation " + operation);
          byte[] lsn = rows.getBytes(1);
          expect(previous == null || java.util.Arrays.compareUnsigned(previous, lsn) <= 0,
                 "change rows in LSN order");
          previous = lsn;
        }
        expect(count == changeRows, "change rows: " + count + ", not " + changeRows);
      }
    }
    ok("prepared statements");
  }

  // Queries of no fixed shape, as Debezium's connector asks the catalog (the T-SQL front end).
  void catalogQueries(String instance) throws SQLException {
    try (PreparedStatement database = connection.prepareStatement("SELECT name FROM sys.databases WHERE name = ?")) {
      database.setString(1, "SIM");
      try (ResultSet rows = database.executeQuery()) {
        expect(rows.next() && "sim".equals(rows.getString(1)) && !rows.next(), "sys.databases has the database");
      }
    }
    String changeTables = "WITH ordered AS (SELECT ROW_NUMBER() OVER (PARTITION BY ct.source_object_id, ct.start_lsn "
        + "ORDER BY ct.create_date DESC) AS seq, ct.* FROM [sim].cdc.change_tables AS ct) "
        + "SELECT OBJECT_SCHEMA_NAME(source_object_id, DB_ID(?)), OBJECT_NAME(source_object_id, DB_ID(?)), "
        + "capture_instance, start_lsn FROM ordered WHERE seq = 1";
    try (PreparedStatement tables = connection.prepareStatement(changeTables)) {
      tables.setString(1, "sim");
      tables.setString(2, "sim");
      try (ResultSet rows = tables.executeQuery()) {
        expect(rows.next(), "a capture instance");
        String found = rows.getString(1) + "." + rows.getString(2) + " " + rows.getString(3);
        expect(found.equals("dbo.orders " + instance), "capture instance: " + found);
        expect(rows.getBytes(4).length == 10, "start_lsn is binary(10)");
        expect(!rows.next(), "one capture instance");
      }
    }
    ok("catalog queries");
  }

  // DatabaseMetaData through sp_tables, sp_pkeys and sp_statistics_100.
  void metadata() throws SQLException {
    java.sql.DatabaseMetaData meta = connection.getMetaData();
    try (ResultSet tables = meta.getTables("sim", "dbo", "%", new String[] {"TABLE"})) {
      expect(tables.next() && "orders".equals(tables.getString("TABLE_NAME"))
             && "dbo".equals(tables.getString("TABLE_SCHEM")) && "TABLE".equals(tables.getString("TABLE_TYPE")),
             "getTables finds dbo.orders");
      expect(!tables.next(), "getTables finds one table");
    }
    try (ResultSet columns = meta.getColumns("sim", "dbo", "orders", null)) {
      StringBuilder found = new StringBuilder();
      while (columns.next()) {
        found.append(columns.getString("COLUMN_NAME")).append(' ').append(columns.getString("TYPE_NAME")).append(' ')
            .append(columns.getInt("DATA_TYPE")).append(' ').append(columns.getInt("COLUMN_SIZE")).append(' ')
            .append(columns.getString("DECIMAL_DIGITS")).append(' ').append(columns.getString("IS_NULLABLE")).append(';');
      }
      // nvarchar(40) is NVARCHAR (-9); decimal(18,2) DECIMAL (3) with its scale.
      expect(found.toString().equals("id int 4 10 0 NO;note nvarchar -9 40 null YES;amount decimal 3 18 2 YES;"),
             "getColumns: " + found);
    }
    try (ResultSet keys = meta.getPrimaryKeys("sim", "dbo", "orders")) {
      expect(keys.next() && "id".equals(keys.getString("COLUMN_NAME")) && keys.getInt("KEY_SEQ") == 1,
             "getPrimaryKeys names id");
      expect(!keys.next(), "one key column");
    }
    try (ResultSet indexes = meta.getIndexInfo("sim", "dbo", "orders", true, true)) {
      boolean key = false;
      while (indexes.next()) {
        key = key || ("id".equals(indexes.getString("COLUMN_NAME")) && !indexes.getBoolean("NON_UNIQUE"));
      }
      expect(key, "getIndexInfo has the unique key on id");
    }
    ok("metadata");
  }

  void transactions() throws SQLException {
    expect(connection.getAutoCommit(), "autocommit is on by default");
    expect(transactionCount() == 0, "no transaction under autocommit");
    connection.setAutoCommit(false);
    expect(transactionCount() == 0, "SELECT @@TRANCOUNT reads no table and opens nothing");
    try (Statement statement = connection.createStatement()) {
      statement.execute("EXEC sys.sp_cdc_help_change_data_capture");
    }
    expect(transactionCount() == 1, "a read of a table opens an implicit transaction");
    connection.commit();
    expect(transactionCount() == 0, "commit closes it");
    Savepoint first = connection.setSavepoint("first");
    expect(transactionCount() == 1, "a savepoint opens one transaction");
    Savepoint second = connection.setSavepoint();
    connection.rollback(second);
    connection.rollback(first);
    expect(transactionCount() == 1, "rolling back to a savepoint keeps the transaction");
    connection.rollback();
    expect(transactionCount() == 0, "rollback ends it");
    connection.setAutoCommit(true);
    connection.commit();  // under autocommit the driver's commit opens and ends nothing
    expect(transactionCount() == 0, "autocommit again");
    ok("transactions");
  }

  void errors() throws SQLException {
    try {
      scalar("SELECT * FROM dbo.no_such_table");
      throw new AssertionError("a missing table is an error");
    } catch (SQLException e) {
      expect(e.getErrorCode() == 208, "error " + e.getErrorCode());
      expect(Objects.equals(e.getMessage(), "Invalid object name 'dbo.no_such_table'."), e.getMessage());
    }
    try (Statement statement = connection.createStatement()) {
      statement.execute("COMMIT TRAN");
      throw new AssertionError("a commit with nothing open is an error");
    } catch (SQLException e) {
      expect(e.getErrorCode() == 3902, "error " + e.getErrorCode());
    }
    expect(((Number) scalar("SELECT 1")).intValue() == 1, "the connection goes on after errors");
    ok("errors");
  }

  void valid() throws SQLException {
    expect(connection.isValid(5), "isValid");
    ok("isValid");
  }
}
