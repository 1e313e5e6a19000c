#include "sim/workload.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <thread>
#include <unordered_map>

#include "core/errors.h"
#include "sim/database.h"
#include "sim/random.h"
#include "sim/storage.h"
#include "sim/transaction.h"
#include "sim/value_codec.h"
#include "sim/value_generator.h"
#include "core/ascii.h"

namespace mssql_cdc::sim {
namespace {

// The keys of one table's committed rows, for picking rows to update and delete.
class LiveKeys {
 public:
  bool empty() const { return keys_.size() == 0; }
  std::size_t size() const { return keys_.size(); }
  const Row& at(std::size_t i) const { return keys_[i]; }
  bool Contains(const std::string& id) const { return index_.count(id) > 0; }
  void Add(const std::string& id, Row key) {
    index_[id] = keys_.size();
    keys_.push_back(std::move(key));
    ids_.push_back(id);
  }
  void RemoveAt(std::size_t i) {
    index_.erase(ids_[i]);
    if (i + 1 != keys_.size()) {
      keys_[i] = std::move(keys_.back());
      ids_[i] = std::move(ids_.back());
      index_[ids_[i]] = i;
    }
    keys_.pop_back();
    ids_.pop_back();
  }

 private:
  std::vector<Row> keys_;
  std::vector<std::string> ids_;
  std::unordered_map<std::string, std::size_t> index_;
};

// How often a transaction is built again after another client changed its rows first.
constexpr int kConflictRetries = 100;

struct TableState {
  TableInfo info;
  LiveKeys live;
  std::vector<std::string> pending;  // keys inserted by the open long transaction
  std::int64_t next_key = 1;
  std::vector<const ColumnInfo*> settable;  // non-key, non-rowversion columns
};

// Identity of a key, independent of how its values were spelled.
std::string KeyId(const TableInfo& t, const Row& key) {
  std::string id;
  for (const auto& k : t.key) {
    const ColumnInfo* c = t.Find(k);
    id += EncodeValue(c->type, key.at(c->name), c->name).DebugString();
    id += '\x1f';
  }
  return id;
}

Row ExtractKey(const TableInfo& t, const Row& row) {
  Row key;
  for (const auto& k : t.key) {
    const std::string& name = t.Find(k)->name;
    key[name] = row.at(name);
  }
  return key;
}

void LoadKeys(SimDatabase& db, TableState& state) {
  std::string sql = "SELECT ";
  for (std::size_t k = 0; k < state.info.key.size(); ++k) {
    sql += (k ? ", " : "") + QuoteIdent(state.info.key[k]);
  }
  sql += " FROM " + QuoteIdent(SourceTableStorageName(state.info.name.schema, state.info.name.name)) +
         " ORDER BY ";
  for (std::size_t k = 0; k < state.info.key.size(); ++k) {
    sql += (k ? ", " : "") + QuoteIdent(state.info.key[k]);
  }
  Statement st(db.sqlite(), sql);
  while (st.Step()) {
    Row key;
    for (std::size_t k = 0; k < state.info.key.size(); ++k) {
      key[state.info.Find(state.info.key[k])->name] = st.Get(static_cast<int>(k));
    }
    std::string id = KeyId(state.info, key);  // before `key` is moved from
    state.live.Add(id, std::move(key));
  }
  state.next_key = static_cast<std::int64_t>(state.live.size()) + 1;
}

class Generator {
 public:
  Generator(std::uint64_t seed) : random_(seed) {}
  Random& random() { return random_; }

  // A new row with a key no committed or pending row has.
  Row NewRow(TableState& s) {
    Row row;
    std::string id;
    for (int attempt = 0;; ++attempt) {
      row.clear();
      for (const auto& k : s.info.key) {
        const ColumnInfo* c = s.info.Find(k);
        row[c->name] = KeyValue(c->type, s.next_key);
      }
      ++s.next_key;
      id = KeyId(s.info, row);
      if (!s.live.Contains(id) &&
          std::find(s.pending.begin(), s.pending.end(), id) == s.pending.end()) {
        break;
      }
      if (attempt > 1'000'000) {
        throw ConfigError("cannot find a free key in " + s.info.name.ToString() +
                          ": its key type is too narrow for more rows");
      }
    }
    for (const auto& c : s.info.columns) {
      if (c.key_ordinal > 0 || IsRowversion(c.type)) continue;
      row[c.name] = c.nullable && random_.Chance(0.1) ? Value() : RandomValue(c.type, random_);
    }
    return row;
  }

  Row NewValues(const TableState& s) {
    Row set;
    const auto count = std::min<std::int64_t>(3, static_cast<std::int64_t>(s.settable.size()));
    const std::int64_t wanted = random_.Uniform(1, count);
    while (static_cast<std::int64_t>(set.size()) < wanted) {
      const ColumnInfo* c = s.settable[static_cast<std::size_t>(
          random_.Uniform(0, static_cast<std::int64_t>(s.settable.size()) - 1))];
      set[c->name] = c->nullable && random_.Chance(0.1) ? Value() : RandomValue(c->type, random_);
    }
    return set;
  }

 private:
  Random random_;
};

enum class Op { kInsert, kUpdate, kDelete };

}  // namespace

OperationMix OperationMix::Parse(std::string_view text) {
  OperationMix mix{0, 0, 0};
  const std::string original(text);
  auto fail = [&](const std::string& why) {
    throw ConfigError("invalid mix '" + original + "': " + why +
                      "; write it like insert=0.5,update=0.35,delete=0.15");
  };
  std::map<std::string, bool> seen;
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view part = TrimAsciiSpace(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const auto eq = part.find('=');
    if (eq == std::string_view::npos) fail("'" + std::string(part) + "' has no '='");
    std::string name(TrimAsciiSpace(part.substr(0, eq)));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string number(TrimAsciiSpace(part.substr(eq + 1)));
    double weight;
    std::size_t used = 0;
    try {
      weight = std::stod(number, &used);
    } catch (const std::exception&) {
      fail("'" + number + "' is not a number");
    }
    if (used != number.size() || !std::isfinite(weight)) fail("'" + number + "' is not a number");
    if (weight < 0) fail("weights must not be negative");
    if (seen[name]) fail(name + " is given twice");
    seen[name] = true;
    if (name == "insert") {
      mix.insert = weight;
    } else if (name == "update") {
      mix.update = weight;
    } else if (name == "delete") {
      mix.remove = weight;
    } else {
      fail("unknown operation '" + name + "' (use insert, update, delete)");
    }
  }
  if (!(mix.insert + mix.update + mix.remove > 0)) fail("the weights must sum to more than 0");
  return mix;
}

std::string OperationMix::ToString() const {
  char buf[128];
  std::snprintf(buf, sizeof buf, "insert=%g,update=%g,delete=%g", insert, update, remove);
  return buf;
}

Workload::Workload(SimDatabase& db, WorkloadOptions options)
    : db_(db), options_(std::move(options)) {
  const auto& o = options_;
  if (!(o.transactions_per_second > 0) || !std::isfinite(o.transactions_per_second)) {
    throw ConfigError("transactions per second must be more than 0");
  }
  if (!o.duration_seconds && !o.transactions) {
    throw ConfigError("give the workload a duration (seconds) or a number of transactions");
  }
  if (o.duration_seconds && !(*o.duration_seconds >= 0)) {
    throw ConfigError("the duration must not be negative");
  }
  if (o.transactions && *o.transactions < 0) {
    throw ConfigError("the number of transactions must not be negative");
  }
  if (o.statements_per_transaction < 1) {
    throw ConfigError("statements per transaction must be at least 1");
  }
  if (o.bulk_rows < 1) throw ConfigError("bulk rows must be at least 1");
  if (!(o.long_transaction_seconds >= 0)) {
    throw ConfigError("the long transaction's duration must not be negative");
  }
  if (o.idle_entry_seconds) CheckIdleInterval(*o.idle_entry_seconds);
  if (!(o.mix.insert >= 0 && o.mix.update >= 0 && o.mix.remove >= 0 &&
        o.mix.insert + o.mix.update + o.mix.remove > 0)) {
    throw ConfigError("the operation mix needs non-negative weights that sum to more than 0");
  }
}

WorkloadReport Workload::Run() {
  using Clock = std::chrono::steady_clock;
  const auto wall_start = Clock::now();
  WorkloadReport report;

  std::vector<TableState> tables;
  std::vector<TableName> names = options_.tables;
  if (names.empty()) {
    for (const auto& instance : db_.CaptureInstances()) {
      if (std::none_of(names.begin(), names.end(), [&](const TableName& n) {
            return SameName(n.ToString(), instance.table.ToString());
          })) {
        names.push_back(instance.table);
      }
    }
    if (names.empty()) {
      throw ConfigError("no table of " + db_.path() +
                        " has CDC enabled: enable it, or name the tables to drive");
    }
  }
  for (const auto& name : names) {
    TableState state;
    state.info = db_.Table(name);
    tables.push_back(std::move(state));
  }
  // Pointers into each info stay valid: the vector is not resized from here on.
  for (auto& t : tables) {
    for (const auto& c : t.info.columns) {
      if (c.key_ordinal == 0 && !IsRowversion(c.type)) t.settable.push_back(&c);
    }
    LoadKeys(db_, t);
  }

  Generator gen(options_.seed);
  Random& random = gen.random();
  const bool manual = db_.clock_mode() == ClockMode::kManual;
  const auto step_micros =
      static_cast<std::int64_t>(std::llround(1e6 / options_.transactions_per_second));
  const std::int64_t long_micros = static_cast<std::int64_t>(options_.long_transaction_seconds * 1e6);
  const UtcMicros sim_start = db_.NowUtc();
  const double idle_seconds = options_.idle_entry_seconds.value_or(db_.idle_entry_seconds());
  const auto idle_micros = static_cast<std::int64_t>(idle_seconds * 1e6);
  UtcMicros last_activity = sim_start;

  auto elapsed_micros = [&]() -> std::int64_t {
    if (manual) return db_.NowUtc().value - sim_start.value;
    return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - wall_start).count();
  };
  auto note_commit = [&](const CommitResult& r) {
    if (!r.commit_lsn) return;
    if (!report.first_commit_lsn) report.first_commit_lsn = r.commit_lsn;
    report.last_commit_lsn = r.commit_lsn;
  };
  auto pick_op = [&](const TableState& t) {
    const double total = options_.mix.insert + options_.mix.update + options_.mix.remove;
    const double r = random.Unit() * total;
    Op op = r < options_.mix.insert                          ? Op::kInsert
            : r < options_.mix.insert + options_.mix.update ? Op::kUpdate
                                                              : Op::kDelete;
    // Nothing to update or delete yet, or nothing but key columns to set: insert instead.
    if (op != Op::kInsert && t.live.empty()) op = Op::kInsert;
    if (op == Op::kUpdate && t.settable.empty()) op = Op::kInsert;
    return op;
  };

  std::unique_ptr<Transaction> long_txn;
  std::vector<std::pair<TableState*, Row>> long_rows;
  UtcMicros long_began{};

  // One short transaction's statements, chosen on the keys as this client knows them.
  struct Counts {
    std::int64_t inserts = 0, updates = 0, deletes = 0;
  };
  auto add_statements = [&](Transaction& transaction) {
    Counts counts;
    for (int s = 0; s < options_.statements_per_transaction; ++s) {
      TableState& t = tables[static_cast<std::size_t>(
          random.Uniform(0, static_cast<std::int64_t>(tables.size()) - 1))];
      const Op op = pick_op(t);
      const std::int64_t rows =
          options_.bulk ? (op == Op::kInsert ? options_.bulk_rows
                                             : std::min<std::int64_t>(options_.bulk_rows,
                                                                      static_cast<std::int64_t>(t.live.size())))
                        : 1;
      if (op == Op::kInsert) {
        std::vector<Row> batch;
        for (std::int64_t r = 0; r < rows; ++r) {
          batch.push_back(gen.NewRow(t));
          t.live.Add(KeyId(t.info, batch.back()), ExtractKey(t.info, batch.back()));
        }
        counts.inserts += rows;
        transaction.InsertMany(t.info.name, std::move(batch));
      } else if (op == Op::kUpdate) {
        std::vector<RowUpdate> batch;
        // Consecutive positions from a random start: distinct rows in one statement.
        const auto start = random.Uniform(0, static_cast<std::int64_t>(t.live.size()) - 1);
        for (std::int64_t r = 0; r < rows; ++r) {
          const auto& key = t.live.at(static_cast<std::size_t>((start + r) % static_cast<std::int64_t>(t.live.size())));
          batch.push_back(RowUpdate{key, gen.NewValues(t)});
        }
        counts.updates += rows;
        transaction.UpdateMany(t.info.name, std::move(batch));
      } else {
        std::vector<Row> keys;
        for (std::int64_t r = 0; r < rows; ++r) {
          const auto at = static_cast<std::size_t>(
              random.Uniform(0, static_cast<std::int64_t>(t.live.size()) - 1));
          keys.push_back(t.live.at(at));
          t.live.RemoveAt(at);
        }
        counts.deletes += rows;
        transaction.DeleteMany(t.info.name, std::move(keys));
      }
    }
    return counts;
  };

  std::int64_t i = 0;
  for (;; ++i) {
    if (options_.transactions && i >= *options_.transactions) break;
    if (options_.duration_seconds &&
        elapsed_micros() >= static_cast<std::int64_t>(*options_.duration_seconds * 1e6)) {
      break;
    }
    if (options_.should_stop && options_.should_stop()) break;
    if (!manual && !options_.bulk) {
      std::this_thread::sleep_until(wall_start + std::chrono::microseconds(i * step_micros));
    }
    UtcMicros now = db_.NowUtc();
    if (now.value - last_activity.value >= idle_micros) {  // spares a busy workload the query
      report.idle_entries += db_.WriteDueIdleEntries(idle_seconds);
      last_activity = now;
    }
    if (long_micros > 0 && !long_txn) {
      long_txn = db_.Begin();
      long_began = now;
    }

    // Another client may have changed the tables since this one read their keys (a second
    // workload, `sim dml`): a statement then meets a row it did not expect, nothing commits,
    // and the transaction is built again on the keys as they are now.
    Counts counts;
    CommitResult result;
    for (int attempt = 1;; ++attempt) {
      try {
        auto txn = db_.Begin();
        counts = add_statements(*txn);
        result = txn->Commit();
        break;
      } catch (const DuplicateKeyError&) {
        if (attempt == kConflictRetries) throw;
      } catch (const MissingRowError&) {
        if (attempt == kConflictRetries) throw;
      }
      ++report.conflicts;
      for (auto& t : tables) {
        t.live = LiveKeys();
        LoadKeys(db_, t);
      }
    }
    note_commit(result);
    last_activity = db_.NowUtc();
    ++report.transactions;
    report.inserts += counts.inserts;
    report.updates += counts.updates;
    report.deletes += counts.deletes;

    if (long_txn) {
      // One insert per short transaction joins the long one; its keys become visible to the
      // short ones only after it commits.
      TableState& t = tables[static_cast<std::size_t>(
          random.Uniform(0, static_cast<std::int64_t>(tables.size()) - 1))];
      Row row = gen.NewRow(t);
      t.pending.push_back(KeyId(t.info, row));
      long_txn->Insert(t.info.name, row);
      long_rows.emplace_back(&t, std::move(row));
      if (db_.NowUtc().value - long_began.value >= long_micros) {
        note_commit(long_txn->Commit());
        ++report.transactions;
        ++report.long_transactions;
        report.inserts += static_cast<std::int64_t>(long_rows.size());
        for (auto& [table, row] : long_rows) {
          table->live.Add(KeyId(table->info, row), ExtractKey(table->info, row));
          table->pending.clear();
        }
        long_rows.clear();
        long_txn.reset();
      }
    }
    if (manual) db_.AdvanceClock(step_micros);
  }
  if (long_txn && long_txn->statement_count() > 0) {
    note_commit(long_txn->Commit());
    ++report.transactions;
    ++report.long_transactions;
    report.inserts += static_cast<std::int64_t>(long_rows.size());
  }
  report.elapsed_seconds =
      std::chrono::duration<double>(Clock::now() - wall_start).count();
  return report;
}

}  // namespace mssql_cdc::sim
