// The transaction state of one connection to `mssql-cdc sim serve`, as SQL Server keeps it for
// a session: @@TRANCOUNT, the savepoints of the open transaction, its name, and whether
// IMPLICIT_TRANSACTIONS is on. The simulator serves reads only, so a transaction changes no
// data; what it keeps is what clients ask and rely on (drivers commit and roll back through
// `IF @@TRANCOUNT > 0 COMMIT TRAN`, savepoints through SAVE TRAN), with SQL Server's errors for
// what SQL Server refuses.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mssql_cdc::sim_server {

class SessionTransactions {
 public:
  int count() const { return count_; }
  bool implicit() const { return implicit_; }
  void SetImplicit(bool on) { implicit_ = on; }

  // A statement that starts an implicit transaction is about to run (BEGIN TRAN, or a SELECT
  // from a table): with IMPLICIT_TRANSACTIONS on and no transaction open, one opens first.
  void BeforeTransactionalStatement();
  // BEGIN TRAN [name]: the name counts for the outermost transaction only.
  void Begin(std::string_view name);
  // COMMIT [TRAN]: throws SqlError 3902 with no transaction open.
  void Commit();
  // ROLLBACK [TRAN] [name]: the whole transaction, or back to a savepoint (the count
  // unchanged). Throws SqlError 3903 with no transaction open, 6401 for a name that is
  // neither the outermost transaction's nor a savepoint's.
  void Rollback(std::string_view name);
  // SAVE TRAN name: throws SqlError 628 with no transaction open.
  void Save(std::string_view name);

 private:
  void End();

  int count_ = 0;
  bool implicit_ = false;
  std::string name_;
  std::vector<std::string> savepoints_;
};

}  // namespace mssql_cdc::sim_server
