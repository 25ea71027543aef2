/* SPDX-License-Identifier: MIT */
/* LD_PRELOAD shim of the fault-injection harness: while the file named by
 * TN_CHAOS_FSYNC_FAIL exists, fsync and fdatasync (and sync_file_range)
 * return EIO without syncing, as a failing disk does.  Otherwise they do
 * the real system call. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static int failing(void)
{
    const char *trigger = getenv("TN_CHAOS_FSYNC_FAIL");
    return trigger != NULL && access(trigger, F_OK) == 0;
}

int fsync(int fd);
int fdatasync(int fd);

int fsync(int fd)
{
    if (failing()) {
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_fsync, fd);
}

int fdatasync(int fd)
{
    if (failing()) {
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_fdatasync, fd);
}
