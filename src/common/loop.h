/* SPDX-License-Identifier: MIT */
/* A small single-threaded event loop over epoll: fd watchers, one-shot
 * timers on the server clock, and tn_loop_post(), the only call that other
 * threads may make, which runs a function on the loop thread.  It is not a
 * general framework: no priorities, no fairness beyond epoll's. */
#ifndef TN_COMMON_LOOP_H
#define TN_COMMON_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tn_loop;

typedef void (*tn_loop_fd_fn)(void *arg, uint32_t events);
typedef void (*tn_loop_fn)(void *arg);

/* A watch with caller storage, for fds too many for the loop's own table
 * (connections).  Valid while added.  Registered once: the events may
 * include EPOLLET, so that a watched fd costs no system call until its
 * state changes (edge-triggered; the caller must then read or write until
 * EAGAIN, or remember that it did not). */
struct tn_loop_watch {
    int fd;           /* -1 when not added */
    tn_loop_fd_fn fn; /* callback */
    void *arg;        /* callback argument */
};

/* A post: embed it in your struct; it must stay valid until it has run. */
struct tn_loop_post {
    tn_loop_fn fn;             /* runs on the loop thread */
    void *arg;                 /* passed to fn */
    struct tn_loop_post *next; /* queue link, owned by the loop */
};

/* A timer: caller storage, valid while armed.  Timers due at the same
 * millisecond run in the order they were armed. */
struct tn_loop_timer {
    int64_t due_ms;    /* server clock (tn_clock_now_ms) */
    tn_loop_fn fn;     /* runs on the loop thread */
    void *arg;         /* passed to fn */
    bool armed;        /* set while in the loop's heap */
    size_t heap_index; /* its place in the loop's heap, while armed */
    uint64_t seq;      /* arming order: breaks ties of due_ms */
};

struct tn_loop *tn_loop_new(void);
void tn_loop_free(struct tn_loop *loop);

/* Watch fd for events (EPOLLIN...).  0 or TN_EIO.  Loop thread only. */
int tn_loop_add_fd(struct tn_loop *loop, int fd, uint32_t events,
                   tn_loop_fd_fn fn, void *arg);
int tn_loop_mod_fd(struct tn_loop *loop, int fd, uint32_t events);
void tn_loop_del_fd(struct tn_loop *loop, int fd);

/* Watch fd with w (caller storage).  0 or TN_EIO.  Loop thread only.
 * tn_loop_watch_del only forgets w: closing the fd removes it from epoll.
 * An event already fetched for w in the current iteration is dropped once
 * w->fd is -1, so w may be freed at the end of the iteration (defer). */
int tn_loop_watch_add(struct tn_loop *loop, struct tn_loop_watch *w, int fd,
                      uint32_t events, tn_loop_fd_fn fn, void *arg);
int tn_loop_watch_mod(struct tn_loop *loop, struct tn_loop_watch *w,
                      uint32_t events);
void tn_loop_watch_del(struct tn_loop *loop, struct tn_loop_watch *w);

/* Arm t to run fn(arg) at due_ms (re-arming moves it).  O(log n) in the
 * armed timers.  The loop's timer heap may have to grow: out of memory
 * there aborts (a timer that silently never fires would hang its waiter).
 * Loop thread only. */
void tn_loop_timer_arm(struct tn_loop *loop, struct tn_loop_timer *t,
                       int64_t due_ms, tn_loop_fn fn, void *arg);
void tn_loop_timer_disarm(struct tn_loop *loop, struct tn_loop_timer *t);

/* Queue p->fn(p->arg) to run on the loop thread.  Thread-safe. */
void tn_loop_post(struct tn_loop *loop, struct tn_loop_post *p);

/* Queue p->fn(p->arg) to run once at the end of the current loop
 * iteration, after every ready fd and due timer was handled and before the
 * loop waits again: work that many callbacks of one iteration produce is
 * then handed on once.  p must not be deferred again before it has run;
 * tn_loop_cancel() takes it back.  Loop thread only. */
void tn_loop_defer(struct tn_loop *loop, struct tn_loop_post *p);
/* The same, for work that blocks the loop (the inline commit's write and
 * sync, Redis's beforeSleep): p runs after this iteration's deferred calls
 * (so what they had ready has gone out first), and the calls p defers run
 * right after it in the same iteration, not in the next one. */
void tn_loop_defer_late(struct tn_loop *loop, struct tn_loop_post *p);
void tn_loop_cancel(struct tn_loop *loop, struct tn_loop_post *p);

/* Run the posts queued so far.  Loop thread only. */
void tn_loop_run_posts(struct tn_loop *loop);

/* One turn: wait up to timeout_ms for events (0: poll), run them, the due
 * timers, the deferred calls and the late ones.  0 or TN_EIO.  Loop thread only
 * (tests drive a loop with it). */
int tn_loop_run_once(struct tn_loop *loop, int timeout_ms);

/* Run until tn_loop_stop().  Returns 0 or TN_EIO. */
int tn_loop_run(struct tn_loop *loop);
/* Make tn_loop_run return after the current iteration.  Thread-safe. */
void tn_loop_stop(struct tn_loop *loop);

#endif
