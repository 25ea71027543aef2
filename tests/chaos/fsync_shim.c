/* SPDX-License-Identifier: MIT */
/* LD_PRELOAD shim of the fault-injection harness: while the file named by
 * TN_CHAOS_FSYNC_FAIL exists, fsync and fdatasync return EIO without
 * syncing, as a failing disk does.  Otherwise they do the real system
 * call, after TN_CHAOS_FSYNC_DELAY_US microseconds if that is set: a slow
 * disk, which widens every window between a write and its sync.  On the
 * same slow disk pwrite waits as long before it writes, which widens the
 * window between deciding a change and writing it: a kill -9 loses only
 * what was never written (the page cache outlives the process), so an
 * answer that leaves before its write is caught only if the write comes
 * late.  Only pwrite is wrapped, the journal's call; SQLite writes through
 * pwrite64 and is not slowed. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int failing(void)
{
    const char *trigger = getenv("TN_CHAOS_FSYNC_FAIL");
    return trigger != NULL && access(trigger, F_OK) == 0;
}

static void slow_disk(void)
{
    const char *us = getenv("TN_CHAOS_FSYNC_DELAY_US");
    long n = us != NULL ? strtol(us, NULL, 10) : 0;
    if (n <= 0)
        return;
    struct timespec ts = {.tv_sec = n / 1000000, .tv_nsec = n % 1000000 * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int fsync(int fd);
int fdatasync(int fd);
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off);

int fsync(int fd)
{
    if (failing()) {
        errno = EIO;
        return -1;
    }
    slow_disk();
    return (int)syscall(SYS_fsync, fd);
}

int fdatasync(int fd)
{
    if (failing()) {
        errno = EIO;
        return -1;
    }
    slow_disk();
    return (int)syscall(SYS_fdatasync, fd);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    slow_disk();
    return (ssize_t)syscall(SYS_pwrite64, fd, buf, n, off);
}
