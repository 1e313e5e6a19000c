// Reads the rows of a small result (a catalog procedure, an LSN function) by column name,
// ignoring case, as the server names them. Values are read with SQLGetData in ascending
// column order, as drivers require, whatever order the caller names them in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.h"
#include "source/odbc/statement.h"

namespace mssql_cdc::odbc {

enum class CellKind { kText, kInt, kBytes, kTime };

struct NamedColumn {
  std::string name;
  CellKind kind;
};

class CatalogRows {
 public:
  // `statement` has been executed; `what` names the statement in messages. Throws
  // SourceError when a named column is missing.
  CatalogRows(OdbcStatement& statement, std::vector<NamedColumn> columns, std::string what);

  // Fetches the next row and reads its named columns; false at the end.
  bool Next();

  // The values of the current row, by the position the column was named in.
  std::optional<std::string> Text(std::size_t i) const;
  std::optional<std::int64_t> Int(std::size_t i) const;
  std::optional<std::string> Bytes(std::size_t i) const;
  std::optional<LocalMicros> Time(std::size_t i) const;
  // As Text, throwing SourceError when NULL.
  std::string RequiredText(std::size_t i) const;

 private:
  struct Cell {
    bool null = true;
    std::string bytes;  // text (UTF-8) or binary
    std::int64_t integer = 0;
    std::int64_t micros = 0;
  };
  const Cell& Checked(std::size_t i, CellKind kind) const;

  OdbcStatement& statement_;
  std::vector<NamedColumn> columns_;
  std::string what_;
  std::vector<SQLUSMALLINT> indexes_;     // result column of each named column
  std::vector<std::size_t> read_order_;   // named columns by ascending result column
  std::vector<Cell> cells_;
};

}  // namespace mssql_cdc::odbc
