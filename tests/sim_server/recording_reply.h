// A ReplyWriter that keeps what a statement answered, for unit tests of the statement
// engine: each result set's columns and rows, INFO messages and the error. Values are kept in
// the form they were passed in, with a printable rendering for assertions. Header-only.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "tds/query_handler.h"

namespace mssql_cdc::testing {

struct Bytes {
  std::string value;
  friend bool operator==(const Bytes&, const Bytes&) = default;
};
// NULL, Int, Float, Text or Binary, as the engine passed it.
using Cell = std::variant<std::monostate, std::int64_t, double, std::string, Bytes>;

inline std::string Render(const Cell& cell) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  switch (cell.index()) {
    case 0:
      return "NULL";
    case 1:
      return std::to_string(std::get<1>(cell));
    case 2:
      return std::to_string(std::get<2>(cell));
    case 3:
      return std::get<3>(cell);
    default: {
      std::string out = "0x";
      for (unsigned char c : std::get<4>(cell).value) {
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
      }
      return out;
    }
  }
}

struct RecordedResult {
  std::vector<tds::ResultColumn> columns;
  std::vector<std::vector<Cell>> rows;

  // The index of the column named `name`; throws when there is none.
  std::size_t ColumnIndex(const std::string& name) const {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (columns[i].name == name) return i;
    }
    throw std::runtime_error("no result column " + name);
  }
  const Cell& At(std::size_t row, const std::string& column) const {
    return rows.at(row).at(ColumnIndex(column));
  }
  std::string Text(std::size_t row, const std::string& column) const {
    return Render(At(row, column));
  }
  std::vector<std::string> ColumnNames() const {
    std::vector<std::string> names;
    for (const auto& c : columns) names.push_back(c.name);
    return names;
  }
  std::vector<std::string> ColumnTypes() const {
    std::vector<std::string> names;
    for (const auto& c : columns) names.push_back(c.type.ToString());
    return names;
  }
};

class RecordingReply final : public tds::ReplyWriter, private tds::ResultSet {
 public:
  tds::ResultSet& BeginResult(const std::vector<tds::ResultColumn>& columns) override {
    if (error) throw std::logic_error("a result after the error");
    if (!row_.empty()) throw std::logic_error("a result began inside a row");
    results.push_back(RecordedResult{columns, {}});
    return *this;
  }
  void Info(std::int32_t number, const std::string& message) override {
    infos.emplace_back(number, message);
  }
  void Fail(const tds::ServerError& e) override {
    if (error) throw std::logic_error("a second error");
    error = e;
  }

  std::vector<RecordedResult> results;
  std::vector<std::pair<std::int32_t, std::string>> infos;
  std::optional<tds::ServerError> error;

  // The one result set; a copy when called on a temporary reply, so that it outlives it.
  const RecordedResult& Only() const& {
    if (results.size() != 1) {
      throw std::runtime_error("expected one result, got " + std::to_string(results.size()) +
                               (error ? " and error " + error->message : std::string()));
    }
    return results[0];
  }
  RecordedResult Only() && { return static_cast<const RecordingReply&>(*this).Only(); }

 private:
  void Add(Cell cell) {
    if (row_.size() >= results.back().columns.size()) {
      throw std::logic_error("more values than columns in a row");
    }
    row_.push_back(std::move(cell));
  }
  void Null() override { Add(std::monostate{}); }
  void Int(std::int64_t value) override { Add(value); }
  void Float(double value) override { Add(value); }
  void Text(std::string_view value) override { Add(std::string(value)); }
  void Binary(std::string_view value) override { Add(Bytes{std::string(value)}); }
  // Values are recorded one by one, so answers give them that way.
  bool TakesEncodedValues() const override { return false; }
  void EncodedValues(std::string_view, std::size_t) override {
    throw std::logic_error("EncodedValues on a reply that takes none");
  }
  void EndRow() override {
    if (row_.size() != results.back().columns.size()) {
      throw std::logic_error("a row of " + std::to_string(row_.size()) + " values for " +
                             std::to_string(results.back().columns.size()) + " columns");
    }
    results.back().rows.push_back(std::move(row_));
    row_.clear();
  }

  std::vector<Cell> row_;
};

}  // namespace mssql_cdc::testing
