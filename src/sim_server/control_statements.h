// Reads the control statements drivers send around their queries, one after another with or
// without `;` between them: SET options, BEGIN/COMMIT/ROLLBACK/SAVE TRAN[SACTION], IF
// @@TRANCOUNT <compare> <number> with an optional ELSE, and BEGIN ... END blocks of these
// (mssql-jdbc's savepoint is `IF @@TRANCOUNT = 0 BEGIN BEGIN TRAN IF @@TRANCOUNT = 2 COMMIT
// TRAN END SAVE TRAN [name]`, its commit `set implicit_transactions off IF @@TRANCOUNT > 0
// COMMIT TRAN`). The steps are run by Answer(ControlStatements) on the session's
// SessionTransactions.
#pragma once

#include "sim_server/recognized_statement.h"
#include "sim_server/token_cursor.h"

namespace mssql_cdc::sim_server {

// Reads as many control statements as follow at the cursor into `out`, leaving the cursor
// after the last; false, the cursor where it was, when none does.
bool ReadControlStatements(TokenCursor& cursor, ControlStatements* out);

}  // namespace mssql_cdc::sim_server
