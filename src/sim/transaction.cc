#include "sim/transaction.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <unordered_map>

#include "core/errors.h"
#include "sim/database.h"
#include "sim/lsn_sequence.h"
#include "sim/storage.h"
#include "sim/value_codec.h"
#include "sim/wire_rows.h"

namespace mssql_cdc::sim {

// SimDatabase's, defined here beside the Transaction it makes, so that the database's own
// file does not need the transaction's.
std::unique_ptr<Transaction> SimDatabase::Begin() {
  return std::make_unique<Transaction>(*this, NowUtc());
}

namespace {

using Image = std::vector<Value>;  // one value per live column, in TableInfo::columns order

std::size_t IndexOf(const TableInfo& t, const ColumnInfo* c) {
  return static_cast<std::size_t>(c - t.columns.data());
}

std::string Folded(std::string_view name) {
  std::string out(name);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A table's live columns found by name, as spelt or else ignoring case (as SQL Server's default
// collation compares names), without scanning the columns for every value of a bulk statement.
class ColumnNames {
 public:
  explicit ColumnNames(const TableInfo& table) : table_(table) {
    for (const auto& c : table.columns) {
      exact_.emplace(c.name, &c);
      folded_.emplace(Folded(c.name), &c);
    }
  }
  const TableInfo& table() const { return table_; }
  const ColumnInfo* Find(const std::string& name) const {
    if (auto it = exact_.find(name); it != exact_.end()) return it->second;
    auto it = folded_.find(Folded(name));
    return it == folded_.end() ? nullptr : it->second;
  }

 private:
  const TableInfo& table_;
  std::unordered_map<std::string, const ColumnInfo*> exact_;
  std::unordered_map<std::string, const ColumnInfo*> folded_;
};

// Resolves the names of `row` to live columns and encodes their values.
std::vector<std::pair<const ColumnInfo*, Value>> EncodeNamed(const ColumnNames& names,
                                                             const Row& row, std::string_view what) {
  const TableInfo& t = names.table();
  std::vector<std::pair<const ColumnInfo*, Value>> out;
  out.reserve(row.size());
  for (const auto& [name, value] : row) {
    const ColumnInfo* c = names.Find(name);
    if (!c) {
      throw ConfigError(std::string(what) + " " + t.name.ToString() + ": there is no column " +
                        name);
    }
    for (const auto& [seen, unused] : out) {
      if (seen == c) {
        throw ConfigError(std::string(what) + " " + t.name.ToString() + ": column " + c->name +
                          " is given twice");
      }
    }
    if (IsRowversion(c->type)) {
      throw ConfigError(std::string(what) + " " + t.name.ToString() + ": column " + c->name +
                        " is a rowversion, set by the database: leave it out");
    }
    if (value.is_null() && !c->nullable) {
      throw ConfigError(std::string(what) + " " + t.name.ToString() + ": column " + c->name +
                        " does not allow NULLs");
    }
    out.emplace_back(c, EncodeValue(c->type, value, c->name));
  }
  return out;
}

Image EncodeInsert(const ColumnNames& names, const Row& row) {
  const TableInfo& t = names.table();
  Image image(t.columns.size());
  for (auto& [c, value] : EncodeNamed(names, row, "insert into")) image[IndexOf(t, c)] = std::move(value);
  for (std::size_t i = 0; i < t.columns.size(); ++i) {
    const ColumnInfo& c = t.columns[i];
    if (image[i].is_null() && !c.nullable && !IsRowversion(c.type)) {
      throw ConfigError("insert into " + t.name.ToString() + ": column " + c.name +
                        " does not allow NULLs and has no value");
    }
  }
  return image;
}

// The key's values in key order. Every key column must be given, and nothing else.
Image EncodeKey(const ColumnNames& names, const Row& key, std::string_view what) {
  const TableInfo& t = names.table();
  auto named = EncodeNamed(names, key, what);
  Image out;
  for (const auto& key_column : t.key) {
    const ColumnInfo* c = names.Find(key_column);
    auto it = std::find_if(named.begin(), named.end(), [&](auto& p) { return p.first == c; });
    if (it == named.end()) {
      throw ConfigError(std::string(what) + " " + t.name.ToString() + ": the key must give " +
                        "every primary-key column; " + c->name + " is missing");
    }
    out.push_back(it->second);
  }
  if (named.size() != t.key.size()) {
    throw ConfigError(std::string(what) + " " + t.name.ToString() +
                      ": the key may name only primary-key columns");
  }
  return out;
}

// A logged change's image: the columns given, the others NULL; every key column given.
Image EncodeLogged(const ColumnNames& names, const Row& row) {
  const TableInfo& t = names.table();
  Image image(t.columns.size());
  for (auto& [c, value] : EncodeNamed(names, row, "a change of")) image[IndexOf(t, c)] = std::move(value);
  for (const auto& key_column : t.key) {
    if (image[IndexOf(t, names.Find(key_column))].is_null()) {
      throw ConfigError("a change of " + t.name.ToString() + " must give every primary-key column; " +
                        key_column + " is missing");
    }
  }
  return image;
}

std::vector<std::pair<const ColumnInfo*, Value>> EncodeSet(const ColumnNames& names, const Row& set) {
  const TableInfo& t = names.table();
  if (set.empty()) {
    throw ConfigError("update of " + t.name.ToString() + ": nothing to set");
  }
  auto named = EncodeNamed(names, set, "update of");
  for (const auto& [c, value] : named) {
    if (c->key_ordinal > 0) {
      throw ConfigError("update of " + t.name.ToString() + ": key column " + c->name +
                        " cannot be updated; delete the row and insert it with the new key");
    }
  }
  return named;
}

std::string KeyText(const TableInfo& t, const Image& key) {
  std::string out = "(";
  for (std::size_t k = 0; k < t.key.size(); ++k) {
    out += (k ? ", " : "") + t.key[k] + "=" + key[k].DebugString();
  }
  return out + ")";
}

std::string MaskBytes(int max_ordinal) {
  return std::string(static_cast<std::size_t>((max_ordinal + 7) / 8), '\0');
}

void SetBit(std::string& mask, int ordinal) {
  const std::size_t byte = mask.size() - 1 - static_cast<std::size_t>(ordinal - 1) / 8;
  mask[byte] = static_cast<char>(static_cast<unsigned char>(mask[byte]) | (1u << ((ordinal - 1) % 8)));
}

// The source table and its capture instances as the commit sees them, with prepared
// statements reused across the rows of a commit.
class TableWriter {
 public:
  TableWriter(SqliteDb& db, Catalog& catalog, const TableName& name)
      : db_(db), info_(catalog.LoadTable(name)), instances_(catalog.InstancesOf(info_.object_id)),
        command_ids_(instances_.size(), 0) {
    storage_ = QuoteIdent(SourceTableStorageName(info_.name.schema, info_.name.name));
    for (std::size_t k = 0; k < info_.key.size(); ++k) {
      where_ += (k ? " AND " : " WHERE ") + QuoteIdent(info_.key[k]) + " = ?";
    }
    // Built once: a bulk statement runs them for every row.
    std::string marks;
    for (std::size_t i = 0; i < info_.columns.size(); ++i) marks += i ? ", ?" : "?";
    select_sql_ = "SELECT " + ColumnList() + " FROM " + storage_ + where_;
    insert_sql_ = "INSERT INTO " + storage_ + "(" + ColumnList() + ") VALUES(" + marks + ")";
    delete_sql_ = "DELETE FROM " + storage_ + where_;
  }

  const TableInfo& info() const { return info_; }
  const std::vector<CaptureInstance>& instances() const { return instances_; }
  int NextCommandId(std::size_t instance) { return ++command_ids_[instance]; }

  std::optional<Image> Read(const Image& key) {
    Statement& st = Prepared(select_sql_);
    st.Reset();
    BindKey(st, key, 1);
    if (!st.Step()) return std::nullopt;
    Image image;
    for (std::size_t i = 0; i < info_.columns.size(); ++i) image.push_back(st.Get(static_cast<int>(i)));
    st.Reset();
    return image;
  }

  void Insert(const Image& image) {
    Statement& st = Prepared(insert_sql_);
    st.Reset();
    for (std::size_t i = 0; i < image.size(); ++i) st.Bind(static_cast<int>(i + 1), image[i]);
    st.Run();
  }

  void Update(const Image& key, const Image& after, const std::vector<std::size_t>& columns) {
    std::string sql = "UPDATE " + storage_ + " SET ";
    for (std::size_t i = 0; i < columns.size(); ++i) {
      sql += (i ? ", " : "") + QuoteIdent(info_.columns[columns[i]].name) + " = ?";
    }
    Statement& st = Prepared(sql + where_);
    st.Reset();
    for (std::size_t i = 0; i < columns.size(); ++i) st.Bind(static_cast<int>(i + 1), after[columns[i]]);
    BindKey(st, key, static_cast<int>(columns.size()) + 1);
    st.Run();
  }

  void Delete(const Image& key) {
    Statement& st = Prepared(delete_sql_);
    st.Reset();
    BindKey(st, key, 1);
    st.Run();
  }

 private:
  std::string ColumnList() const {
    std::string out;
    for (std::size_t i = 0; i < info_.columns.size(); ++i) {
      out += (i ? ", " : "") + QuoteIdent(info_.columns[i].name);
    }
    return out;
  }
  void BindKey(Statement& st, const Image& key, int first) {
    for (std::size_t k = 0; k < key.size(); ++k) st.Bind(first + static_cast<int>(k), key[k]);
  }
  Statement& Prepared(const std::string& sql) {
    auto& slot = statements_[sql];
    if (!slot) slot = std::make_unique<Statement>(db_, sql);
    return *slot;
  }

  SqliteDb& db_;
  TableInfo info_;
  std::vector<CaptureInstance> instances_;
  std::vector<int> command_ids_;
  std::string storage_;
  std::string where_;
  std::string select_sql_, insert_sql_, delete_sql_;
  std::map<std::string, std::unique_ptr<Statement>> statements_;
};

struct PendingChange {
  const CaptureInstance* instance;
  Seqval seqval;
  int operation;
  std::string mask;
  int command_id;
  std::vector<Value> values;
};

// The change rows one row change writes into each capture instance of its table.
// `changed` lists the live-column indexes an update set (empty for inserts and deletes).
void RecordChange(TableWriter& writer, const Seqval& seqval, int operation_before,
                  const Image* before, const Image* after, const std::vector<std::size_t>& changed,
                  std::vector<PendingChange>* out) {
  const TableInfo& t = writer.info();
  const auto& instances = writer.instances();
  for (std::size_t n = 0; n < instances.size(); ++n) {
    const CaptureInstance& instance = instances[n];
    const int command_id = writer.NextCommandId(n);
    const int max_ordinal = instance.columns.empty() ? 1 : instance.columns.back().ordinal;
    std::string mask = MaskBytes(max_ordinal);
    auto live_index = [&](const CapturedColumnInfo& cc) -> std::optional<std::size_t> {
      const ColumnInfo* c = t.FindById(cc.column_id);
      if (!c) return std::nullopt;  // dropped since the instance was enabled
      return IndexOf(t, c);
    };
    for (const auto& cc : instance.columns) {
      if (operation_before != 3) {
        SetBit(mask, cc.ordinal);  // deletes and inserts set every bit
      } else if (auto i = live_index(cc);
                 i && std::find(changed.begin(), changed.end(), *i) != changed.end()) {
        SetBit(mask, cc.ordinal);
      }
    }
    auto values_of = [&](const Image& image, int operation) {
      std::vector<Value> values;
      for (const auto& cc : instance.columns) {
        auto i = live_index(cc);
        Value v = i ? image[*i] : Value();
        // LOB rules of cdc.<capture_instance>_CT: text/ntext/image never in deletes and
        // before images; (max) types in before images only when the update changed them.
        if (i && (operation == 1 || operation == 3) && IsLegacyLob(cc.type)) v = Value();
        if (i && operation == 3 && IsLob(cc.type) &&
            std::find(changed.begin(), changed.end(), *i) == changed.end()) {
          v = Value();
        }
        values.push_back(std::move(v));
      }
      return values;
    };
    if (operation_before == 3) {
      out->push_back({&instance, seqval, 3, mask, command_id, values_of(*before, 3)});
      out->push_back({&instance, seqval, 4, mask, command_id, values_of(*after, 4)});
    } else if (operation_before == 1) {
      out->push_back({&instance, seqval, 1, mask, command_id, values_of(*before, 1)});
    } else {
      out->push_back({&instance, seqval, 2, mask, command_id, values_of(*after, 2)});
    }
  }
}

// Applies a logged change (Transaction::LogChange) to the table and records its change rows.
void CommitLogged(TableWriter& w, const ColumnNames& names, int operation, const Row& row,
                  LsnSequence* sequence, std::vector<PendingChange>* changes,
                  std::optional<Image>* pending_before) {
  const TableInfo& t = w.info();
  const Image image = EncodeLogged(names, row);
  Image key;
  for (const auto& k : t.key) key.push_back(image[IndexOf(t, names.Find(k))]);
  auto key_of = [&](const Image& other) {
    Image out;
    for (const auto& k : t.key) out.push_back(other[IndexOf(t, names.Find(k))]);
    return out;
  };
  if (*pending_before && (operation != 4 || key_of(**pending_before) != key)) {
    throw ConfigError("a change with operation 3 (an update's before image) of " + t.name.ToString() +
                      " must be followed by its after image (4) of the same key; nothing was committed");
  }
  std::vector<std::size_t> all(t.columns.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::optional<Image> stored = w.Read(key);
  switch (operation) {
    case 1:
      if (stored) w.Delete(key);
      RecordChange(w, sequence->Next(), 1, &image, nullptr, {}, changes);
      break;
    case 2:
      if (stored) {
        w.Update(key, image, all);
      } else {
        w.Insert(image);
      }
      RecordChange(w, sequence->Next(), 2, nullptr, &image, {}, changes);
      break;
    case 3:
      *pending_before = image;
      break;
    case 4: {
      const Image before = *pending_before ? **pending_before : (stored ? *stored : image);
      pending_before->reset();
      std::vector<std::size_t> changed;
      for (std::size_t i = 0; i < image.size(); ++i) {
        if (!(before[i] == image[i])) changed.push_back(i);
      }
      if (stored) {
        w.Update(key, image, all);
      } else {
        w.Insert(image);
      }
      RecordChange(w, sequence->Next(), 3, &before, &image, changed, changes);
      break;
    }
  }
}

std::string LowerName(const TableName& name) {
  std::string out = name.ToString();
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Value NextRowversion(Catalog& catalog) {
  const std::uint64_t v = std::stoull(catalog.RequireMeta(kMetaLastRowversion)) + 1;
  catalog.SetMeta(kMetaLastRowversion, std::to_string(v));
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[7 - static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
  return Value(Bytes{bytes});
}

// The change rows of one commit, and their wire rows when the file keeps them.
void WriteChangeRows(SqliteDb& db, const std::vector<PendingChange>& changes, const Lsn& commit) {
  struct InstanceWriter {
    std::unique_ptr<Statement> insert;
    std::unique_ptr<Statement> insert_wire;
    std::unique_ptr<WireRowEncoder> encoder;
  };
  std::map<std::int64_t, InstanceWriter> writers;
  const bool keeps_wire_rows = KeepsWireRows(db);
  for (const auto& change : changes) {
    auto& writer = writers[change.instance->object_id];
    if (!writer.insert) {
      std::string sql = "INSERT INTO " + QuoteIdent(ChangeTableStorageName(change.instance->name)) +
                        "(\"__$start_lsn\", \"__$end_lsn\", \"__$seqval\", \"__$operation\", "
                        "\"__$update_mask\"";
      std::string marks = "?, NULL, ?, ?, ?";
      for (const auto& c : change.instance->columns) {
        sql += ", " + QuoteIdent(c.name);
        marks += ", ?";
      }
      sql += ", \"__$command_id\") VALUES(" + marks + ", ?)";
      writer.insert = std::make_unique<Statement>(db, sql);
      if (keeps_wire_rows) {
        writer.insert_wire = std::make_unique<Statement>(
            db, "INSERT INTO " + QuoteIdent(WireTableStorageName(change.instance->name)) +
                    " VALUES(?, ?, ?, ?, ?)");
        writer.encoder = std::make_unique<WireRowEncoder>(*change.instance);
      }
    }
    Statement& st = *writer.insert;
    st.Reset();
    st.BindBlob(1, commit.data(), Lsn::kSize)
        .BindBlob(2, change.seqval.data(), Lsn::kSize)
        .BindInt(3, change.operation)
        .BindBlob(4, change.mask.data(), change.mask.size());
    int index = 5;
    for (const auto& v : change.values) st.Bind(index++, v);
    st.BindInt(index, change.command_id);
    st.Run();
    if (!writer.insert_wire) continue;
    Statement& wire = *writer.insert_wire;
    wire.Reset();
    wire.BindBlob(1, commit.data(), Lsn::kSize)
        .BindInt(2, change.command_id)
        .BindBlob(3, change.seqval.data(), Lsn::kSize)
        .BindInt(4, change.operation);
    const auto encoded = writer.encoder->Encode(change.values);
    if (encoded) {
      wire.BindBlob(5, encoded->data(), encoded->size());
    } else {
      wire.BindNull(5);
    }
    wire.Run();
  }
}

}  // namespace

Transaction::Transaction(SimDatabase& db, UtcMicros begin_time)
    : db_(db), begin_time_(begin_time) {}

Transaction::~Transaction() = default;

void Transaction::CheckOpen() const {
  if (!open_) throw ConfigError("the transaction has already committed or rolled back");
}

void Transaction::Add(Statement statement) {
  CheckOpen();
  // Check names and values now, so a bad one fails where it was written.
  const TableInfo t = db_.catalog().LoadTable(statement.table);
  const ColumnNames names(t);
  for (std::size_t i = 0; i < statement.rows.size(); ++i) {
    switch (statement.op) {
      case Op::kInsert:
        EncodeInsert(names, statement.rows[i]);
        break;
      case Op::kUpdate:
        EncodeKey(names, statement.rows[i], "update of");
        EncodeSet(names, statement.sets[i]);
        break;
      case Op::kDelete:
        EncodeKey(names, statement.rows[i], "delete from");
        break;
      case Op::kLog:
        if (statement.operation < 1 || statement.operation > 4) {
          throw ConfigError("a change of " + t.name.ToString() + " has operation " +
                            std::to_string(statement.operation) +
                            ": 1 (delete), 2 (insert), 3 (update, before) or 4 (update, after)");
        }
        EncodeLogged(names, statement.rows[i]);
        break;
    }
  }
  statements_.push_back(std::move(statement));
}

void Transaction::Insert(const TableName& table, Row row) {
  Add(Statement{Op::kInsert, table, {std::move(row)}, {}});
}

void Transaction::InsertMany(const TableName& table, std::vector<Row> rows) {
  Add(Statement{Op::kInsert, table, std::move(rows), {}});
}

void Transaction::Update(const TableName& table, Row key, Row set) {
  Add(Statement{Op::kUpdate, table, {std::move(key)}, {std::move(set)}});
}

void Transaction::UpdateMany(const TableName& table, std::vector<RowUpdate> updates) {
  Statement s{Op::kUpdate, table, {}, {}};
  for (auto& u : updates) {
    s.rows.push_back(std::move(u.key));
    s.sets.push_back(std::move(u.set));
  }
  Add(std::move(s));
}

void Transaction::Delete(const TableName& table, Row key) {
  Add(Statement{Op::kDelete, table, {std::move(key)}, {}});
}

void Transaction::DeleteMany(const TableName& table, std::vector<Row> keys) {
  Add(Statement{Op::kDelete, table, std::move(keys), {}});
}

void Transaction::LogChange(const TableName& table, int operation, Row image) {
  Statement s{Op::kLog, table, {std::move(image)}, {}};
  s.operation = operation;
  Add(std::move(s));
}

void Transaction::Rollback() {
  CheckOpen();
  statements_.clear();
  open_ = false;
}

CommitResult Transaction::Commit() {
  CheckOpen();
  open_ = false;  // whatever happens below, this transaction is over
  CommitResult result;
  if (statements_.empty()) return result;
  SqliteDb& sqlite = db_.sqlite();
  Catalog& catalog = db_.catalog();
  WriteTransaction tx(sqlite);
  catalog.ProcessPendingEnables();  // the capture process reaches them before this commit
  LsnSequence sequence = catalog.LoadLsnSequence();
  sequence.SkipThenNext(1);  // the transaction's begin record, after other log traffic
  std::map<std::string, std::unique_ptr<TableWriter>> writers;
  std::vector<PendingChange> changes;
  std::optional<Image> pending_before;  // a logged update's before image, waiting for its after
  for (const auto& statement : statements_) {
    // Names compare ignoring case, so one table spelled two ways shares one writer (and one
    // run of command ids).
    auto& writer = writers[LowerName(statement.table)];
    if (!writer) writer = std::make_unique<TableWriter>(sqlite, catalog, statement.table);
    TableWriter* w = writer.get();
    const TableInfo& t = w->info();
    const ColumnNames names(t);
    std::vector<std::size_t> rowversions;
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      if (IsRowversion(t.columns[i].type)) rowversions.push_back(i);
    }
    if (statement.op == Op::kLog) {
      CommitLogged(*w, names, statement.operation, statement.rows[0], &sequence, &changes, &pending_before);
      ++result.rows_affected;
      continue;
    }
    for (std::size_t r = 0; r < statement.rows.size(); ++r) {
      switch (statement.op) {
        case Op::kLog:
          break;  // above
        case Op::kInsert: {
          Image image = EncodeInsert(names, statement.rows[r]);
          for (std::size_t i : rowversions) image[i] = NextRowversion(catalog);
          Image key;
          for (const auto& k : t.key) key.push_back(image[IndexOf(t, names.Find(k))]);
          if (w->Read(key)) {
            throw DuplicateKeyError("insert into " + t.name.ToString() + ": a row with key " +
                              KeyText(t, key) +
                              " exists already (violation of the PRIMARY KEY constraint); "
                              "nothing was committed");
          }
          w->Insert(image);
          RecordChange(*w, sequence.Next(), 2, nullptr, &image, {}, &changes);
          break;
        }
        case Op::kUpdate: {
          const Image key = EncodeKey(names, statement.rows[r], "update of");
          auto before = w->Read(key);
          if (!before) {
            throw MissingRowError("update of " + t.name.ToString() + ": no row with key " +
                                KeyText(t, key) + "; nothing was committed");
          }
          Image after = *before;
          std::vector<std::size_t> changed;
          for (auto& [c, value] : EncodeSet(names, statement.sets[r])) {
            after[IndexOf(t, c)] = value;
            changed.push_back(IndexOf(t, c));
          }
          for (std::size_t i : rowversions) {
            after[i] = NextRowversion(catalog);
            changed.push_back(i);
          }
          w->Update(key, after, changed);
          RecordChange(*w, sequence.Next(), 3, &*before, &after, changed, &changes);
          break;
        }
        case Op::kDelete: {
          const Image key = EncodeKey(names, statement.rows[r], "delete from");
          auto before = w->Read(key);
          if (!before) {
            throw MissingRowError("delete from " + t.name.ToString() + ": no row with key " +
                                KeyText(t, key) + "; nothing was committed");
          }
          w->Delete(key);
          RecordChange(*w, sequence.Next(), 1, &*before, nullptr, {}, &changes);
          break;
        }
      }
      ++result.rows_affected;
    }
  }
  if (pending_before) {
    throw ConfigError("a change with operation 3 (an update's before image) must be followed by "
                      "its after image (4) of the same key; nothing was committed");
  }
  if (!changes.empty()) {
    const Lsn commit = sequence.Next();
    WriteChangeRows(sqlite, changes, commit);
    const UtcMicros end_time = std::max(db_.NowUtc(), begin_time_);
    catalog.AddLsnTimeEntry(commit, db_.ServerTime(begin_time_), db_.ServerTime(end_time),
                            catalog.AllocateTranId());
    result.commit_lsn = commit;
    result.change_rows = static_cast<std::int64_t>(changes.size());
  }
  catalog.StoreLsnSequence(sequence);
  tx.Commit();
  statements_.clear();
  return result;
}

}  // namespace mssql_cdc::sim
