#include "bench_process.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "core/errors.h"

namespace mssql_cdc::bench {

pid_t Spawn(const std::vector<std::string>& argv, const std::string& out) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    if (!std::freopen(out.c_str(), "w", stdout)) _exit(127);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool WaitForText(const std::string& path, const std::string& text, std::chrono::seconds limit,
                 const std::function<void()>& each) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (ReadAll(path).find(text) != std::string::npos) return true;
    if (each) each();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

void ResetPeakRss() {
  std::ofstream("/proc/self/clear_refs") << "5";
}

double PeakRssMb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  throw InternalError("no VmHWM in /proc/self/status");
}

double ProcessCpuSeconds(int pid) {
  if (pid <= 0) return 0;
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) throw InternalError("cannot read /proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  long long utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {  // field 3 is the state
    if (i == 14) utime = std::stoll(field);
    if (i == 15) {
      stime = std::stoll(field);
      break;
    }
  }
  return static_cast<double>(utime + stime) / sysconf(_SC_CLK_TCK);
}

ServedChild ServeSim(const std::string& binary, const std::string& db, const std::string& dir) {
  const std::string out = dir + "/serve.out";
  ServedChild server;
  server.pid = Spawn({binary, "sim", "serve", "--db", db, "--port", "0"}, out);
  if (!WaitForText(out, "listening on", std::chrono::seconds(30))) throw InternalError("sim serve did not start");
  const std::string text = ReadAll(out);
  server.port = std::stoi(text.substr(text.rfind(':') + 1));
  return server;
}

}  // namespace mssql_cdc::bench
