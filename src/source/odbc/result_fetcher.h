// Fetches the rows of an executed statement into the slots of its result columns
// (fetch_column.h), as many at a time as the buffers allow.
//
// When every column can be bound, rows come in arrays (SQL_ATTR_ROW_ARRAY_SIZE, column-wise
// binding) sized to about 8 MiB of buffers. Otherwise one row comes per SQLFetch: the columns
// before the first unbindable one stay bound, and it and every column after it are read
// with SQLGetData, in column order as drivers require. At the end of the rows the rest of
// the reply is drained, so an error the server sends after its last row is not missed.
#pragma once

#include <cstddef>
#include <vector>

#include "source/odbc/fetch_column.h"
#include "source/odbc/statement.h"

namespace mssql_cdc::odbc {

class ResultFetcher {
 public:
  // `statement` has been executed; `columns` has one entry per result column, in result
  // order. At most `max_rows` rows per fetch.
  ResultFetcher(OdbcStatement& statement, std::vector<ResultSlots*> columns, std::size_t max_rows);

  // Fetches the next rows into slots 0..n-1 and returns n; 0 at the end of the result.
  std::size_t Next();
  // As Next, without reading the SQLGetData columns: for rows that are skipped.
  std::size_t Skip();

  bool one_row_at_a_time() const { return first_unbound_ < columns_.size(); }
  std::size_t rows_per_fetch() const { return rows_per_fetch_; }

 private:
  std::size_t Fetch(bool read_unbound);

  OdbcStatement& statement_;
  std::vector<ResultSlots*> columns_;
  std::size_t first_unbound_ = 0;  // columns from here on are read with SQLGetData
  std::size_t rows_per_fetch_ = 1;
  SQLULEN fetched_ = 0;
  std::vector<SQLUSMALLINT> row_status_;
  bool done_ = false;
};

}  // namespace mssql_cdc::odbc
