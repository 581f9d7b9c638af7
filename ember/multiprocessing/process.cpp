#include "ember/multiprocessing/process.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>
#include <thread>
#include <typeinfo>

#include "ember/core/generator.h"

extern char** environ;

namespace ember::multiprocessing {
namespace {

using Clock = std::chrono::steady_clock;

// Environment of a spawned child: which entry to run, and how to report back.
constexpr const char* kEntryVar = "EMBER_MP_ENTRY";
constexpr const char* kIndexVar = "EMBER_MP_INDEX";
constexpr const char* kSeedVar = "EMBER_MP_SEED";
constexpr const char* kErrorFdVar = "EMBER_MP_ERROR_FD";
constexpr size_t kMaxReport = 16 << 10;  // bytes; a pipe holds 64 KiB without blocking

std::map<std::string, EntryFn>& entries() {
  static auto* m = new std::map<std::string, EntryFn>();
  return *m;
}

std::vector<std::string>& program_args() {
  static auto* v = new std::vector<std::string>();
  return *v;
}

std::string demangle(const char* name) {
  int status = 0;
  char* s = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && s ? s : name;
  std::free(s);
  return out;
}

void write_all(int fd, const std::string& text) {
  const char* p = text.data();
  size_t left = std::min(text.size(), kMaxReport);
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n <= 0 && errno != EINTR) return;
    if (n > 0) {
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
}

// Runs a child's work; returns its exit code after reporting an exception on `fd`.
int run_child(int fd, uint64_t seed, const std::function<void()>& body) {
  default_generator().manual_seed(seed);
  int code = 0;
  try {
    body();
  } catch (const std::exception& e) {
    write_all(fd, demangle(typeid(e).name()) + ": " + e.what());
    code = 1;
  } catch (...) {
    write_all(fd, "an exception of unknown type");
    code = 1;
  }
  std::fflush(nullptr);
  return code;
}

std::string read_report(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0)
      out.append(buf, static_cast<size_t>(n));
    else if (n < 0 && errno == EINTR)
      continue;
    else
      break;
  }
  return out;
}

}  // namespace

std::string signal_name(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

std::vector<int> handle_descriptors(const std::string& arg) {
  std::string_view prefix = kHandlePrefix;
  if (arg.compare(0, prefix.size(), prefix) != 0) return {};
  std::vector<int> fds;
  const char* p = arg.c_str() + prefix.size();
  while (*p) {
    char* end = nullptr;
    long fd = std::strtol(p, &end, 10);
    EMBER_CHECK(end != p && fd >= 0 && fd <= INT32_MAX && (*end == ',' || *end == '\0'),
                "[multiprocessing] expected a handle like 'ember-fds:5,6', got '", arg, "'");
    fds.push_back(static_cast<int>(fd));
    p = *end ? end + 1 : end;
  }
  EMBER_CHECK(!fds.empty(), "[multiprocessing] the handle '", arg, "' names no descriptor");
  return fds;
}

bool register_entry(const std::string& name, EntryFn fn) {
  entries()[name] = fn;
  return true;
}

void init(int argc, char** argv) {
  program_args().assign(argv, argv + argc);
  const char* entry = std::getenv(kEntryVar);
  if (!entry) return;
  // A spawned child: run its entry point and end here.
  std::string name = entry;
  int index = std::atoi(std::getenv(kIndexVar) ? std::getenv(kIndexVar) : "0");
  uint64_t seed = std::strtoull(std::getenv(kSeedVar) ? std::getenv(kSeedVar) : "0", nullptr, 10);
  int fd = std::atoi(std::getenv(kErrorFdVar) ? std::getenv(kErrorFdVar) : "-1");
  for (const char* var : {kEntryVar, kIndexVar, kSeedVar, kErrorFdVar}) unsetenv(var);
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  int code = run_child(fd, seed, [&] {
    auto it = entries().find(name);
    EMBER_CHECK(it != entries().end(), "[multiprocessing] no entry point named '", name,
                "' is registered in this program (EMBER_MULTIPROCESSING_ENTRY(", name, "))");
    it->second(index, args);
  });
  // The process exists only to run the entry point: it ends like a program whose main returned.
  std::exit(code);
}

// --- Process ------------------------------------------------------------------------------------

struct Process::Impl {
  std::function<void()> fn;  // fork start method
  bool exec = false;         // spawn start method: entry, index, args
  std::string entry;
  int index = 0;
  std::vector<std::string> args;
  std::optional<uint64_t> seed;

  pid_t pid = -1;
  int report_fd = -1;  // read end of the child's error pipe
  std::string report;
  std::optional<int> exitcode;

  ~Impl() {
    if (pid > 0 && !exitcode) {
      ::kill(pid, SIGKILL);
      int status;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    if (report_fd >= 0) close(report_fd);
  }

  // Reaps the child if it has ended. Requires pid > 0.
  void poll() {
    if (exitcode || pid <= 0) return;
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r != pid) return;
    exitcode = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    report = read_report(report_fd);
  }

  void start() {
    EMBER_CHECK(pid < 0, "[Process::start] the process was already started (pid ", pid, ")");
    uint64_t s = seed ? *seed : default_generator().random64();
    // Everything the child needs is built before fork: between fork and exec only
    // async-signal-safe calls are allowed.
    std::vector<std::string> argv_text, env_text;
    std::vector<char*> argv_ptrs, env_ptrs;
    std::vector<int> inherited;  // Note [Ends across exec]
    if (exec)
      for (const std::string& a : args) {
        std::vector<int> fds = handle_descriptors(a);
        for (int fd : fds)
          EMBER_CHECK(fcntl(fd, F_GETFD) != -1, "[Process::start] argument '", a,
                      "' names descriptor ", fd,
                      ", which is not open here: was its queue or connection destroyed?");
        inherited.insert(inherited.end(), fds.begin(), fds.end());
      }
    int fds[2];
    EMBER_CHECK(pipe2(fds, O_CLOEXEC) == 0, "[Process::start] pipe failed: ", std::strerror(errno));
    if (exec) {
      EMBER_CHECK(
          !program_args().empty(),
          "[Process::start] the spawn start method needs ember::multiprocessing::init(argc, argv) at the top of main()");
      argv_text.push_back(program_args()[0]);
      argv_text.insert(argv_text.end(), args.begin(), args.end());
      for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "EMBER_MP_", 9) != 0) env_text.emplace_back(*e);
      env_text.push_back(std::string(kEntryVar) + "=" + entry);
      env_text.push_back(std::string(kIndexVar) + "=" + std::to_string(index));
      env_text.push_back(std::string(kSeedVar) + "=" + std::to_string(s));
      env_text.push_back(std::string(kErrorFdVar) + "=" + std::to_string(fds[1]));
      for (auto& a : argv_text) argv_ptrs.push_back(a.data());
      argv_ptrs.push_back(nullptr);
      for (auto& e : env_text) env_ptrs.push_back(e.data());
      env_ptrs.push_back(nullptr);
    }
    pid_t parent = getpid();
    std::fflush(nullptr);  // or the child would print the parent's buffered output again
    pid_t child = fork();
    if (child < 0) {
      int err = errno;
      close(fds[0]);
      close(fds[1]);
      EMBER_FAIL("[Process::start] fork failed: ", std::strerror(err));
    }
    if (child == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // a worker never outlives its parent
      if (getppid() != parent) _exit(1);
      close(fds[0]);
      if (exec) {
        fcntl(fds[1], F_SETFD, 0);  // the report pipe survives exec, as do the ends named in args
        for (int fd : inherited) fcntl(fd, F_SETFD, 0);
        execve("/proc/self/exe", argv_ptrs.data(), env_ptrs.data());
        static const char kMsg[] = "the spawn start method could not exec /proc/self/exe";
        ssize_t ignored = write(fds[1], kMsg, sizeof kMsg - 1);
        (void)ignored;
        _exit(127);
      }
      // _exit, not exit: the parent's atexit handlers and static objects are not the child's.
      _exit(run_child(fds[1], s, fn));
    }
    close(fds[1]);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    pid = child;
    report_fd = fds[0];
  }
};

Process::Process(std::function<void()> fn) : impl_(std::make_unique<Impl>()) {
  impl_->fn = std::move(fn);
}

Process::Process(std::string entry, int index, std::vector<std::string> args)
    : impl_(std::make_unique<Impl>()) {
  impl_->exec = true;
  impl_->entry = std::move(entry);
  impl_->index = index;
  impl_->args = std::move(args);
}

Process::~Process() = default;
Process::Process(Process&&) noexcept = default;
Process& Process::operator=(Process&&) noexcept = default;

void Process::start() { impl_->start(); }

bool Process::join(std::optional<double> timeout_s) {
  EMBER_CHECK(impl_->pid > 0, "[Process::join] the process was not started");
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s.value_or(0));
  auto wait = std::chrono::microseconds(200);
  for (;;) {
    impl_->poll();
    if (impl_->exitcode) return true;
    if (timeout_s && Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(wait);
    wait = std::min(wait * 2, std::chrono::microseconds(10000));
  }
}

bool Process::is_alive() {
  impl_->poll();
  return impl_->pid > 0 && !impl_->exitcode;
}

std::optional<int> Process::exitcode() {
  impl_->poll();
  return impl_->exitcode;
}

void Process::terminate() {
  if (is_alive()) ::kill(impl_->pid, SIGTERM);
}

void Process::kill() {
  if (is_alive()) ::kill(impl_->pid, SIGKILL);
}

pid_t Process::pid() const { return impl_->pid; }

std::string Process::error() {
  impl_->poll();
  return impl_->report;
}

void Process::set_seed(uint64_t seed) { impl_->seed = seed; }

// --- groups -------------------------------------------------------------------------------------

ProcessContext::ProcessContext(std::vector<Process> processes) : processes_(std::move(processes)) {}

ProcessContext::~ProcessContext() {
  for (Process& p : processes_) p.kill();  // ~Process reaps
}

std::vector<pid_t> ProcessContext::pids() const {
  std::vector<pid_t> out;
  for (const Process& p : processes_) out.push_back(p.pid());
  return out;
}

namespace {
std::string describe_failure(Process& p, int index, int nprocs, int code) {
  std::string who =
      detail::str_cat("[multiprocessing] process ", index, " of ", nprocs, " (pid ", p.pid(), ")");
  std::string report = p.error();
  if (!report.empty()) return who + " failed: " + report;
  if (code < 0)
    return who + " was killed by signal " + signal_name(-code) + " (" + strsignal(-code) + ")";
  return detail::str_cat(who, " exited with code ", code);
}
}  // namespace

bool ProcessContext::join(std::optional<double> timeout_s) {
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s.value_or(0));
  auto wait = std::chrono::microseconds(200);
  int n = static_cast<int>(processes_.size());
  for (;;) {
    bool all_done = true;
    for (int i = 0; i < n; ++i) {
      std::optional<int> code = processes_[static_cast<size_t>(i)].exitcode();
      if (!code) {
        all_done = false;
        continue;
      }
      if (*code == 0) continue;
      // The first failure ends the group: SIGTERM, a grace period, then SIGKILL; all reaped.
      Process& failed = processes_[static_cast<size_t>(i)];
      std::string message = describe_failure(failed, i, n, *code);
      for (Process& p : processes_) p.terminate();
      auto grace = Clock::now() + std::chrono::seconds(1);
      for (Process& p : processes_)
        if (!p.join(std::chrono::duration<double>(grace - Clock::now()).count())) {
          p.kill();
          p.join();
        }
      throw ProcessError(message, i, failed.pid(), *code);
    }
    if (all_done) return true;
    if (timeout_s && Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(wait);
    wait = std::min(wait * 2, std::chrono::microseconds(5000));
  }
}

namespace {
ProcessContext start_all(std::vector<Process> processes) {
  // Seeds differ per child and follow from the parent's generator (Note in process.h).
  uint64_t base = default_generator().random64();
  ProcessContext context(std::move(processes));
  uint64_t i = 0;
  for (Process& p : context.processes()) {
    p.set_seed(base + i++);
    p.start();
  }
  return context;
}
}  // namespace

ProcessContext start_processes(int nprocs, std::function<void(int)> fn) {
  EMBER_CHECK(nprocs >= 1, "[spawn] expected nprocs >= 1, got ", nprocs);
  std::vector<Process> processes;
  for (int i = 0; i < nprocs; ++i) processes.emplace_back([fn, i] { fn(i); });
  return start_all(std::move(processes));
}

void spawn(int nprocs, std::function<void(int)> fn) {
  start_processes(nprocs, std::move(fn)).join();
}

ProcessContext start_processes(int nprocs, const std::string& entry,
                               const std::vector<std::string>& args, StartMethod method) {
  EMBER_CHECK(nprocs >= 1, "[spawn] expected nprocs >= 1, got ", nprocs);
  EMBER_CHECK(entries().count(entry), "[spawn] no entry point named '", entry,
              "' is registered (EMBER_MULTIPROCESSING_ENTRY(", entry, "))");
  std::vector<Process> processes;
  for (int i = 0; i < nprocs; ++i) {
    if (method == StartMethod::Spawn) {
      processes.emplace_back(entry, i, args);
    } else {
      EntryFn fn = entries()[entry];
      processes.emplace_back([fn, i, args] { fn(i, args); });
    }
  }
  return start_all(std::move(processes));
}

void spawn(int nprocs, const std::string& entry, const std::vector<std::string>& args,
           StartMethod method) {
  start_processes(nprocs, entry, args, method).join();
}

}  // namespace ember::multiprocessing
