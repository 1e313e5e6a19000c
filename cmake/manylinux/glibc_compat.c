/* Functions the objects compiled on Debian 12 (glibc 2.36 headers) call by names that glibc
 * 2.28, the manylinux_2_28 floor the extension links against, does not export: the stat
 * family became real functions in 2.33 (before, inline calls of __xstat and friends),
 * __libc_single_threaded came in 2.32, pthread_cond_clockwait in 2.30 and arc4random in 2.36.
 * Each is defined here on what 2.28 has, with hidden visibility, so the extension carries
 * them and the glibc it meets is never asked for them. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#define HIDDEN __attribute__((visibility("hidden")))

/* _STAT_VER of x86_64, which the 2.28 wrappers take first. */
enum { kStatVersion = 1 };

extern int __xstat(int, const char*, struct stat*);
extern int __lxstat(int, const char*, struct stat*);
extern int __fxstat(int, int, struct stat*);
extern int __fxstatat(int, int, const char*, struct stat*, int);

HIDDEN int stat(const char* path, struct stat* out) { return __xstat(kStatVersion, path, out); }
HIDDEN int lstat(const char* path, struct stat* out) { return __lxstat(kStatVersion, path, out); }
HIDDEN int fstat(int fd, struct stat* out) { return __fxstat(kStatVersion, fd, out); }
HIDDEN int fstatat(int dir, const char* path, struct stat* out, int flags) {
  return __fxstatat(kStatVersion, dir, path, out, flags);
}
/* On x86_64 struct stat64 is struct stat, and the 64 forms the same calls. */
HIDDEN int stat64(const char* path, struct stat64* out) { return stat(path, (struct stat*)out); }
HIDDEN int lstat64(const char* path, struct stat64* out) { return lstat(path, (struct stat*)out); }
HIDDEN int fstat64(int fd, struct stat64* out) { return fstat(fd, (struct stat*)out); }
HIDDEN int fstatat64(int dir, const char* path, struct stat64* out, int flags) {
  return fstatat(dir, path, (struct stat*)out, flags);
}

/* Zero: "maybe several threads", so libstdc++ always takes its atomic paths. */
HIDDEN char __libc_single_threaded = 0;

/* A wait until `deadline` on `clock`, as pthread_cond_timedwait on a condition variable of
 * the default clock (CLOCK_REALTIME): a monotonic deadline is moved onto the realtime clock. */
HIDDEN int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                                  const struct timespec* deadline) {
  if (clock == CLOCK_REALTIME) return pthread_cond_timedwait(cond, mutex, deadline);
  if (clock != CLOCK_MONOTONIC) return EINVAL;
  struct timespec now_mono, now_real, at;
  clock_gettime(CLOCK_MONOTONIC, &now_mono);
  clock_gettime(CLOCK_REALTIME, &now_real);
  int64_t left = (int64_t)(deadline->tv_sec - now_mono.tv_sec) * 1000000000 +
                 (deadline->tv_nsec - now_mono.tv_nsec);
  if (left < 0) left = 0;
  int64_t ns = now_real.tv_nsec + left % 1000000000;
  at.tv_sec = now_real.tv_sec + (time_t)(left / 1000000000) + (time_t)(ns / 1000000000);
  at.tv_nsec = (long)(ns % 1000000000);
  return pthread_cond_timedwait(cond, mutex, &at);
}

HIDDEN uint32_t arc4random(void) {
  uint32_t value;
  while (getrandom(&value, sizeof value, 0) != (ssize_t)sizeof value) {
  }
  return value;
}
