// The shapes statements are recognised by. Each is a function that is true when the cursor's
// statement is of that shape, filling in what it names; on false it has recorded how far the
// statement matched (TokenCursor), for the error message. Used by statement_recognizer.cc.
#pragma once

#include <span>

#include "sim_server/recognized_statement.h"
#include "sim_server/token_cursor.h"

namespace mssql_cdc::sim_server {

using Shape = bool (*)(TokenCursor&, RecognizedStatement*);

// The statements of source/odbc/statements.h, the plain SELECT of snapshot reads last, as it
// would take any other select list read from a table.
std::span<const Shape> ClientShapes();
// What drivers send on their own, and the CDC functions a person types.
std::span<const Shape> DriverShapes();
// The statements mssql-cdc-pyspark 0.8.0's SqlCdcClient sends (reference_shapes.cc).
std::span<const Shape> ReferenceShapes();

// [EXEC[UTE]] [sys.]procedure [[@name =] value [, ...]], the arguments in order.
struct ProcedureArgument {
  std::string name;  // empty when passed by position
  SqlValue value;
};
bool ProcedureCall(TokenCursor& cursor, std::string_view procedure,
                   std::vector<ProcedureArgument>* arguments);

// Pieces the shapes of several families share (client_shapes.cc).
// [schema].[table], or [table] of dbo.
bool TableName(TokenCursor& cursor, std::string* schema, std::string* table);
// [WHERE [column] op CAST(? AS type) [AND ...]]: nothing when there is no WHERE.
bool Piece(TokenCursor& cursor, KeyPiece* piece);
// name [DESC], name [DESC], ...
bool NameList(TokenCursor& cursor, std::vector<std::string>* names, bool descending = false);

}  // namespace mssql_cdc::sim_server
