#include "storage/local_file_system.h"

#include <arrow/io/file.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "core/errors.h"
#include "core/percent_encoding.h"
#include "core/user_text.h"
#include "core/table_ref.h"

namespace mssql_cdc::storage {
namespace {

std::string ErrnoText(int error) { return std::strerror(error); }

std::string ParentOf(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// A name beside `path` that no other writer picks: temp files must live in the target's
// directory so that link(2) and rename(2) stay within one filesystem.
std::string TempPathBeside(const std::string& path) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(rng()));
  return dir + "." + name + "." + suffix + ".tmp";
}

void FsyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;  // best effort: some filesystems cannot open directories
  ::fsync(fd);
  ::close(fd);
}

// Writes the whole of `contents` to a new file and makes it durable before it is published.
void WriteDurably(const std::string& path, const std::string& contents) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw SourceError("cannot create " + path + ": " + ErrnoText(errno));
  }
  const char* data = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int error = errno;
      ::close(fd);
      ::unlink(path.c_str());
      throw SourceError("cannot write " + path + ": " + ErrnoText(error));
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int error = errno;
    ::unlink(path.c_str());
    throw SourceError("cannot flush " + path + ": " + ErrnoText(error));
  }
}

// Publishes `temp` as `target` only if `target` is absent. link(2) gives the mutual exclusion
// the Delta protocol asks of the storage; renameat2(RENAME_NOREPLACE) serves filesystems
// without hard links.
bool PublishIfAbsent(const std::string& temp, const std::string& target) {
  if (::link(temp.c_str(), target.c_str()) == 0) return true;
  int error = errno;
  if (error == EEXIST) return false;
  if (error == EPERM || error == EOPNOTSUPP || error == ENOSYS) {
#ifdef SYS_renameat2
    constexpr unsigned kRenameNoReplace = 1;
    if (::syscall(SYS_renameat2, AT_FDCWD, temp.c_str(), AT_FDCWD, target.c_str(),
                  kRenameNoReplace) == 0) {
      return true;
    }
    error = errno;
    if (error == EEXIST) return false;
#endif
  }
  throw SourceError("cannot create " + target + ": " + ErrnoText(error));
}

class LocalFs final : public FileSystem {
 public:
  bool Exists(const std::string& path) override {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
  }

  std::optional<std::string> ReadFile(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return std::nullopt;
      throw SourceError("cannot open " + path + ": " + ErrnoText(errno));
    }
    std::string contents;
    char buffer[64 * 1024];
    for (;;) {
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0) {
        if (errno == EINTR) continue;
        int error = errno;
        ::close(fd);
        throw SourceError("cannot read " + path + ": " + ErrnoText(error));
      }
      if (n == 0) break;
      contents.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return contents;
  }

  std::vector<FileInfo> List(const std::string& directory) override {
    std::vector<FileInfo> entries;
    DIR* dir = ::opendir(directory.c_str());
    if (dir == nullptr) {
      if (errno == ENOENT || errno == ENOTDIR) return entries;
      throw SourceError("cannot list " + directory + ": " + ErrnoText(errno));
    }
    while (dirent* entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      struct stat st;
      if (::stat((directory + "/" + name).c_str(), &st) != 0) continue;  // removed meanwhile
      entries.push_back(InfoOf(name, st));
    }
    ::closedir(dir);
    std::sort(entries.begin(), entries.end(),
              [](const FileInfo& a, const FileInfo& b) { return a.name < b.name; });
    return entries;
  }

  void CreateDirectories(const std::string& path) override {
    std::error_code error;
    std::filesystem::create_directories(path, error);
    if (error) throw SourceError("cannot create directory " + path + ": " + error.message());
  }

  bool WriteIfAbsent(const std::string& path, const std::string& contents) override {
    if (Exists(path)) return false;
    std::string temp = TempPathBeside(path);
    WriteDurably(temp, contents);
    bool published;
    try {
      published = PublishIfAbsent(temp, path);
    } catch (...) {
      ::unlink(temp.c_str());
      throw;
    }
    ::unlink(temp.c_str());  // after link(2) the target keeps the data; after rename it is gone
    if (published) FsyncDirectory(ParentOf(path));
    return published;
  }

  void WriteAtomic(const std::string& path, const std::string& contents) override {
    std::string temp = TempPathBeside(path);
    WriteDurably(temp, contents);
    if (::rename(temp.c_str(), path.c_str()) != 0) {
      int error = errno;
      ::unlink(temp.c_str());
      throw SourceError("cannot replace " + path + ": " + ErrnoText(error));
    }
    FsyncDirectory(ParentOf(path));
  }

  void Delete(const std::string& path) override {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      throw SourceError("cannot delete " + path + ": " + ErrnoText(errno));
    }
  }

  FileInfo Stat(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      throw SourceError("cannot stat " + path + ": " + ErrnoText(errno));
    }
    auto slash = path.rfind('/');
    return InfoOf(slash == std::string::npos ? path : path.substr(slash + 1), st);
  }

  std::shared_ptr<arrow::io::OutputStream> OpenOutputStream(const std::string& path) override {
    CreateDirectories(ParentOf(path));
    auto stream = arrow::io::FileOutputStream::Open(path);
    if (!stream.ok()) {
      throw SourceError("cannot create " + path + ": " + stream.status().ToString());
    }
    return *stream;
  }

  std::shared_ptr<arrow::io::RandomAccessFile> OpenInputFile(const std::string& path) override {
    auto file = arrow::io::ReadableFile::Open(path);
    if (!file.ok()) throw SourceError("cannot open " + path + ": " + file.status().ToString());
    return *file;
  }

 private:
  static FileInfo InfoOf(const std::string& name, const struct stat& st) {
    FileInfo info;
    info.name = name;
    info.size = static_cast<std::int64_t>(st.st_size);
    info.modification_time_ms =
        static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
    info.is_directory = S_ISDIR(st.st_mode);
    return info;
  }
};

}  // namespace

std::shared_ptr<FileSystem> LocalFileSystem() {
  static auto fs = std::make_shared<LocalFs>();
  return fs;
}

std::string LocalPathOfUri(const std::string& uri) {
  if (uri.empty()) throw ConfigError("the table path is empty");
  std::string path;
  auto scheme_end = uri.find("://");
  bool has_scheme = scheme_end != std::string::npos &&
                    uri.find('/') == scheme_end + 1;  // "s3://", not "/a/b://c"
  if (uri.rfind("file:", 0) == 0) {
    // file:///abs, file://localhost/abs, and the single-slash form file:/abs Spark prints.
    std::string rest = uri.substr(5);
    if (rest.rfind("//", 0) == 0) {
      rest = rest.substr(2);
      auto slash = rest.find('/');
      std::string host = slash == std::string::npos ? rest : rest.substr(0, slash);
      if (!host.empty() && host != "localhost") {
        throw ConfigError("file URI " + uri + " names host '" + host +
                          "'; only local paths (file:///path) can be opened");
      }
      rest = slash == std::string::npos ? "" : rest.substr(slash);
    }
    if (rest.empty() || rest[0] != '/') {
      throw ConfigError("file URI " + uri + " must hold an absolute path (file:///path)");
    }
    auto decoded = PercentDecode(rest);
    if (!decoded) throw ConfigError("malformed percent escape in table URI " + uri);
    path = std::move(*decoded);
  } else if (has_scheme) {
    throw ConfigError("'" + uri + "': the scheme '" + uri.substr(0, scheme_end) +
                      "' names no store this engine can open; use s3:// (or s3a://), "
                      "abfss:// (or az://), gs://, file:// or a local path");
  } else {
    path = std::filesystem::absolute(uri).lexically_normal().string();
  }
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

void CheckSharedLocation(const std::string& location, const std::string& what) {
  if (location.rfind("file:", 0) == 0) {
    LocalPathOfUri(location);  // refuses another host and a relative file URI
    return;
  }
  if (IsUri(location) || location.rfind("/", 0) == 0) return;
  throw ConfigError(what + "=" + QuoteUserText(location) +
                    " is a relative path, which Spark reads against its default filesystem and "
                    "this package against the working directory; give an absolute path "
                    "(/lake/...) or a URI (file:/..., s3://...)");
}

}  // namespace mssql_cdc::storage
