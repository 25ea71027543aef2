/* SPDX-License-Identifier: MIT */
/* epoll loop.  Posts travel through a mutex-guarded list and an eventfd;
 * everything else is touched by the loop thread only.  Timers sit on a
 * binary min-heap of (due_ms, seq): arming, disarming and firing cost
 * O(log n) even with ten thousand waiters' deadlines armed. */
#include "loop.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <tenure/err.h>

#include "alloc.h"
#include "assert.h"
#include "clock.h"
#include "heap.h"

#define MAX_WATCHERS 64
/* Ready fds taken by one epoll_wait.  With --commit=inline one pass of the
 * loop is one batch (one fdatasync), so this also bounds how many
 * connections share a sync: at 64, 200 connections each waiting for an
 * acquire made batches of 57 rows on average and four syncs where one
 * would do.  Redis takes all ready fds at once as well. */
#define MAX_EVENTS 1024

#define watcher tn_loop_watch /* the table's slots are watches too */

struct tn_loop {
    int epfd;                              /* epoll instance */
    int wakefd;                            /* eventfd for posts and stop */
    atomic_bool stopping;                  /* tn_loop_stop was called */
    pthread_mutex_t mu;                    /* guards posts */
    struct tn_loop_post *posts;            /* LIFO, reversed when run */
    struct tn_heap timers;                 /* tn_loop_timer *, soonest on top */
    uint64_t timer_seq;                    /* last seq handed to a timer */
    struct tn_loop_post *deferred;         /* LIFO, loop thread only */
    struct tn_loop_post *late;             /* tn_loop_defer_late, LIFO */
    struct tn_loop_post *running;          /* the deferred calls being run */
    struct watcher watchers[MAX_WATCHERS]; /* fd callbacks */
    struct epoll_event evs[MAX_EVENTS];    /* one epoll_wait's ready fds */
};

static struct tn_loop_timer *timer_at(const void *elem)
{
    struct tn_loop_timer *t;
    memcpy(&t, elem, sizeof(t));
    return t;
}

static bool sooner(const void *a, const void *b)
{
    const struct tn_loop_timer *x = timer_at(a);
    const struct tn_loop_timer *y = timer_at(b);
    return x->due_ms < y->due_ms || (x->due_ms == y->due_ms && x->seq < y->seq);
}

static void moved(void *elem, size_t i)
{
    timer_at(elem)->heap_index = i;
}

struct tn_loop *tn_loop_new(void)
{
    struct tn_loop *loop = tn_calloc(1, sizeof(*loop));
    if (loop == NULL)
        return NULL;
    for (int i = 0; i < MAX_WATCHERS; i++)
        loop->watchers[i].fd = -1;
    tn_heap_init(&loop->timers, sizeof(struct tn_loop_timer *), sooner, moved);
    pthread_mutex_init(&loop->mu, NULL);
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    loop->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    if (tn_heap_reserve(&loop->timers, 64) < 0 || loop->epfd < 0 ||
        loop->wakefd < 0 ||
        epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->wakefd, &ev) < 0) {
        tn_loop_free(loop);
        return NULL;
    }
    return loop;
}

void tn_loop_free(struct tn_loop *loop)
{
    if (loop == NULL)
        return;
    if (loop->epfd >= 0)
        (void)close(loop->epfd);
    if (loop->wakefd >= 0)
        (void)close(loop->wakefd);
    pthread_mutex_destroy(&loop->mu);
    tn_heap_release(&loop->timers);
    tn_free(loop);
}

int tn_loop_add_fd(struct tn_loop *loop, int fd, uint32_t events,
                   tn_loop_fd_fn fn, void *arg)
{
    for (int i = 0; i < MAX_WATCHERS; i++) {
        if (loop->watchers[i].fd == -1)
            return tn_loop_watch_add(loop, &loop->watchers[i], fd, events, fn,
                                     arg);
    }
    return TN_ENOMEM;
}

int tn_loop_watch_add(struct tn_loop *loop, struct tn_loop_watch *w, int fd,
                      uint32_t events, tn_loop_fd_fn fn, void *arg)
{
    struct epoll_event ev = {.events = events, .data.ptr = w};
    if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
        return TN_EIO;
    w->fd = fd;
    w->fn = fn;
    w->arg = arg;
    return TN_OK;
}

int tn_loop_watch_mod(struct tn_loop *loop, struct tn_loop_watch *w,
                      uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = w};
    return epoll_ctl(loop->epfd, EPOLL_CTL_MOD, w->fd, &ev) < 0 ? TN_EIO
                                                                : TN_OK;
}

void tn_loop_watch_del(struct tn_loop *loop, struct tn_loop_watch *w)
{
    (void)loop;
    w->fd = -1;
}

static struct watcher *find_watcher(struct tn_loop *loop, int fd)
{
    for (int i = 0; i < MAX_WATCHERS; i++) {
        if (loop->watchers[i].fd == fd)
            return &loop->watchers[i];
    }
    return NULL;
}

int tn_loop_mod_fd(struct tn_loop *loop, int fd, uint32_t events)
{
    struct watcher *w = find_watcher(loop, fd);
    if (w == NULL)
        return TN_EINVAL;
    return tn_loop_watch_mod(loop, w, events);
}

void tn_loop_del_fd(struct tn_loop *loop, int fd)
{
    struct watcher *w = find_watcher(loop, fd);
    if (w == NULL)
        return;
    (void)epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
    w->fd = -1;
}

void tn_loop_timer_disarm(struct tn_loop *loop, struct tn_loop_timer *t)
{
    if (!t->armed)
        return;
    TN_ASSERT(t->heap_index < tn_heap_count(&loop->timers) &&
              timer_at(tn_heap_at(&loop->timers, t->heap_index)) == t);
    tn_heap_remove(&loop->timers, t->heap_index, NULL);
    t->armed = false;
}

void tn_loop_timer_arm(struct tn_loop *loop, struct tn_loop_timer *t,
                       int64_t due_ms, tn_loop_fn fn, void *arg)
{
    tn_loop_timer_disarm(loop, t);
    t->due_ms = due_ms;
    t->fn = fn;
    t->arg = arg;
    t->seq = ++loop->timer_seq;
    int rc = tn_heap_push(&loop->timers, &t);
    TN_ASSERT(rc == TN_OK); /* out of memory: see tn_loop_timer_arm */
    t->armed = true;
}

static void wake(struct tn_loop *loop)
{
    uint64_t one = 1;
    (void)!write(loop->wakefd, &one, sizeof(one));
}

void tn_loop_post(struct tn_loop *loop, struct tn_loop_post *p)
{
    pthread_mutex_lock(&loop->mu);
    p->next = loop->posts;
    loop->posts = p;
    pthread_mutex_unlock(&loop->mu);
    wake(loop);
}

void tn_loop_stop(struct tn_loop *loop)
{
    atomic_store(&loop->stopping, true);
    wake(loop);
}

void tn_loop_run_posts(struct tn_loop *loop)
{
    uint64_t n;
    (void)!read(loop->wakefd, &n, sizeof(n));
    pthread_mutex_lock(&loop->mu);
    struct tn_loop_post *p = loop->posts;
    loop->posts = NULL;
    pthread_mutex_unlock(&loop->mu);
    struct tn_loop_post *fifo = NULL;
    while (p != NULL) {
        struct tn_loop_post *next = p->next;
        p->next = fifo;
        fifo = p;
        p = next;
    }
    while (fifo != NULL) {
        struct tn_loop_post *next = fifo->next;
        fifo->fn(fifo->arg);
        fifo = next;
    }
}

void tn_loop_defer(struct tn_loop *loop, struct tn_loop_post *p)
{
    p->next = loop->deferred;
    loop->deferred = p;
}

static bool unlink_post(struct tn_loop_post **pp, struct tn_loop_post *p)
{
    for (; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            return true;
        }
    }
    return false;
}

void tn_loop_defer_late(struct tn_loop *loop, struct tn_loop_post *p)
{
    p->next = loop->late;
    loop->late = p;
}

void tn_loop_cancel(struct tn_loop *loop, struct tn_loop_post *p)
{
    if (!unlink_post(&loop->deferred, p) && !unlink_post(&loop->late, p))
        (void)unlink_post(&loop->running, p);
}

/* Run the calls on *list so far (tn_loop_cancel may take back any not yet
 * run). */
static void run_list(struct tn_loop *loop, struct tn_loop_post **list)
{
    loop->running = *list;
    *list = NULL;
    while (loop->running != NULL) {
        struct tn_loop_post *p = loop->running;
        loop->running = p->next;
        p->fn(p->arg);
    }
}

/* Run the calls deferred so far.  Those they defer in turn run at the end
 * of the next iteration (or after this iteration's late calls, below),
 * which polls instead of waiting: work that keeps producing work (a client
 * pipelining requests that are answered at once) cannot keep the loop from
 * the other connections' events. */
static void run_deferred(struct tn_loop *loop)
{
    run_list(loop, &loop->deferred);
}

/* The late calls, after the deferred ones: whatever was ready to leave has
 * left before a late call blocks (the inline commit's sync); what the late
 * calls defer (the answers of that commit) runs right after them, in this
 * iteration, so that a batch's answers leave before anything new is read
 * and before the next batch's sync.  The deferred calls of this
 * iteration's deferred calls run then too: at most two rounds in an
 * iteration with a late call. */
static void run_late(struct tn_loop *loop)
{
    if (loop->late == NULL)
        return;
    run_list(loop, &loop->late);
    run_deferred(loop);
}

static void run_timers(struct tn_loop *loop)
{
    int64_t now = tn_clock_now_ms();
    void *top;
    while ((top = tn_heap_top(&loop->timers)) != NULL &&
           timer_at(top)->due_ms <= now) {
        struct tn_loop_timer *t = timer_at(top);
        tn_heap_pop(&loop->timers, NULL);
        t->armed = false;
        t->fn(t->arg);
    }
}

static int next_wait_ms(struct tn_loop *loop)
{
    int64_t wait = -1;
    void *top = tn_heap_top(&loop->timers);
    if (top != NULL) {
        wait = timer_at(top)->due_ms - tn_clock_now_ms();
        if (wait < 0)
            wait = 0;
    }
    if (wait > 1000 || wait < 0)
        wait = 1000;
    return (int)wait;
}

int tn_loop_run_once(struct tn_loop *loop, int timeout_ms)
{
    struct epoll_event *evs = loop->evs;
    int n = epoll_wait(loop->epfd, evs, MAX_EVENTS, timeout_ms);
    if (n < 0 && errno != EINTR)
        return TN_EIO;
    for (int i = 0; i < n; i++) {
        struct watcher *w = evs[i].data.ptr;
        if (w == NULL)
            tn_loop_run_posts(loop);
        else if (w->fd != -1)
            w->fn(w->arg, evs[i].events);
    }
    run_timers(loop);
    run_deferred(loop);
    run_late(loop);
    return TN_OK;
}

int tn_loop_run(struct tn_loop *loop)
{
    while (!atomic_load(&loop->stopping)) {
        int wait = next_wait_ms(loop);
        if (loop->deferred != NULL || loop->late != NULL)
            wait = 0;
        if (tn_loop_run_once(loop, wait) < 0)
            return TN_EIO;
    }
    tn_loop_run_posts(loop);
    while (loop->deferred != NULL || loop->late != NULL) {
        run_deferred(loop);
        run_late(loop);
    }
    atomic_store(&loop->stopping, false);
    return TN_OK;
}
