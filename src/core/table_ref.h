// What a table argument names: a table in a catalog, or a storage location.
//
// One rule, the same in every mode and for every table argument: text that contains '/' or
// ':' is a path or URI; any other text is a table name of one to three dot-separated parts
// (table, schema.table, catalog.schema.table) that the session's catalog resolves. A part is
// an unquoted identifier (letters, digits, underscores) or a backquoted one, in which ``
// stands for one backquote; in a template, {ci} stands for the capture instance's name, so
// bronze.{ci} is a name and lake/bronze/{ci} a path. Anything else is refused with a ConfigError that names the
// argument and says how to write it: a name is never taken for a path, nor a path for a name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mssql_cdc {

// Whether a location is a URI: a scheme of two or more characters before ':' ("s3://",
// "dbfs:/", "file:/"); a single letter is a Windows drive, and anything else a path.
bool IsUri(std::string_view location);

class TableRef {
 public:
  // `what` names the argument in errors ("target", "facts_table", ...).
  static TableRef Parse(std::string_view text, std::string_view what);

  bool is_name() const { return !parts_.empty(); }
  bool is_path() const { return parts_.empty(); }
  // `text` when it is a path or URI; a ConfigError when it is a table name, which only a
  // catalog can resolve (the Spark API's; the native engine has none), so that a name is
  // never written as a directory of that name.
  static const std::string& RequirePath(const std::string& text, std::string_view what);

  // As given.
  const std::string& text() const { return text_; }
  // A name's parts, unquoted; empty for a path.
  const std::vector<std::string>& parts() const { return parts_; }
  // A name's parts backquoted and joined, as SQL takes them: `ops`.`ingestion_facts`.
  std::string QuotedName() const;
  // How Spark SQL names the table: QuotedName() for a name, delta.`path` for a path.
  std::string SqlName() const;
  // The schema a name of two or three parts lives in, quoted (`ops`, `main`.`ops`); empty
  // for a one-part name, which lives in the session's current schema.
  std::string QuotedSchema() const;

 private:
  std::string text_;
  std::vector<std::string> parts_;
};

// `part` backquoted for SQL, a backquote inside doubled.
std::string QuoteIdentifier(std::string_view part);
// `text` as a Spark SQL string literal: in single quotes, backslash and quote escaped.
std::string SqlStringLiteral(std::string_view text);

}  // namespace mssql_cdc
