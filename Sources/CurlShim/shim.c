#include "curlshim.h"
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

static pthread_once_t curlshim_once = PTHREAD_ONCE_INIT;
static int curlshim_init_result = 0;

static void curlshim_do_init(void) {
    /* Stop OpenSSL from cleaning up in atexit, so a handle torn down late cannot use freed state. */
    typedef int (*openssl_init_fn)(uint64_t, const void *);
    openssl_init_fn init = (openssl_init_fn)dlsym(RTLD_DEFAULT, "OPENSSL_init_crypto");
    if (init != NULL) {
        init(0x00080000L /* OPENSSL_INIT_NO_ATEXIT */, NULL);
    }
    curlshim_init_result = (int)curl_global_init(CURL_GLOBAL_ALL);
    /* With CURLOPT_NOSIGNAL set, the OpenSSL backend may raise SIGPIPE on a dead socket. */
    signal(SIGPIPE, SIG_IGN);
}

int curlshim_global_init(void) {
    pthread_once(&curlshim_once, curlshim_do_init);
    return curlshim_init_result;
}

CURLcode curlshim_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode curlshim_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode curlshim_setopt_ptr(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode curlshim_setopt_str(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode curlshim_setopt_write_cb(CURL *handle, CURLoption option, curl_write_callback cb) {
    return curl_easy_setopt(handle, option, cb);
}
CURLcode curlshim_setopt_xferinfo_cb(CURL *handle, curl_xferinfo_callback cb) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, cb);
}
CURLcode curlshim_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
CURLcode curlshim_getinfo_ptr(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}
CURLcode curlshim_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
CURLMcode curlshim_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
int curlshim_multi_info_read(CURLM *multi, CURL **easy, CURLcode *result) {
    int queued = 0;
    CURLMsg *msg;
    while ((msg = curl_multi_info_read(multi, &queued)) != NULL) {
        if (msg->msg == CURLMSG_DONE) {
            *easy = msg->easy_handle;
            *result = msg->data.result;
            return 1;
        }
    }
    return 0;
}
int curlshim_sigpipe_ignored(void) {
    struct sigaction current;
    if (sigaction(SIGPIPE, NULL, &current) != 0) return 0;
    return current.sa_handler == SIG_IGN;
}

/* ---- Event loop on curl_multi_socket_action ---- */

struct curlshim_loop {
    CURLM *multi;
    int epfd;
    int evfd;
    long long timer_deadline_ns; /* monotonic; -1: no timer */
};

static long long curlshim_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* libcurl tells which events it wants on a socket; `socketp` is non-NULL once the socket is in the epoll set. */
static int curlshim_socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp) {
    (void)easy;
    curlshim_loop *loop = userp;
    if (what == CURL_POLL_REMOVE) {
        if (socketp != NULL) {
            epoll_ctl(loop->epfd, EPOLL_CTL_DEL, s, NULL);
            curl_multi_assign(loop->multi, s, NULL);
        }
        return 0;
    }
    struct epoll_event event = {0};
    event.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0);
    event.data.fd = s;
    if (socketp == NULL) {
        if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, s, &event) != 0 && errno == EEXIST) {
            epoll_ctl(loop->epfd, EPOLL_CTL_MOD, s, &event);
        }
        curl_multi_assign(loop->multi, s, loop);
    } else if (epoll_ctl(loop->epfd, EPOLL_CTL_MOD, s, &event) != 0 && errno == ENOENT) {
        /* A closed and reopened descriptor number: the kernel dropped the old registration. */
        epoll_ctl(loop->epfd, EPOLL_CTL_ADD, s, &event);
    }
    return 0;
}

static int curlshim_timer_cb(CURLM *multi, long timeout_ms, void *userp) {
    (void)multi;
    curlshim_loop *loop = userp;
    loop->timer_deadline_ns = timeout_ms < 0 ? -1 : curlshim_now_ns() + (long long)timeout_ms * 1000000LL;
    return 0;
}

curlshim_loop *curlshim_loop_new(CURLM *multi) {
    curlshim_loop *loop = calloc(1, sizeof(curlshim_loop));
    if (loop == NULL) return NULL;
    loop->multi = multi;
    loop->timer_deadline_ns = -1;
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    loop->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event wake = {0};
    wake.events = EPOLLIN;
    wake.data.fd = loop->evfd;
    if (loop->epfd < 0 || loop->evfd < 0 || epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->evfd, &wake) != 0) {
        int saved = errno;
        if (loop->epfd >= 0) close(loop->epfd);
        if (loop->evfd >= 0) close(loop->evfd);
        free(loop);
        errno = saved;
        return NULL;
    }
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, curlshim_socket_cb);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, loop);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, curlshim_timer_cb);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, loop);
    return loop;
}

static void curlshim_fire_due_timer(curlshim_loop *loop) {
    if (loop->timer_deadline_ns >= 0 && curlshim_now_ns() >= loop->timer_deadline_ns) {
        int running = 0;
        loop->timer_deadline_ns = -1; /* the callback may set a new one during the call */
        curl_multi_socket_action(loop->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
}

int curlshim_loop_wait(curlshim_loop *loop, int max_wait_ms) {
    /* A due timer runs first, and then the caller reads libcurl's messages before anything blocks: a transfer can
       finish inside this very call (a reused connection and an answer already waiting), and nothing else would
       wake the loop for it. */
    if (loop->timer_deadline_ns >= 0 && curlshim_now_ns() >= loop->timer_deadline_ns) {
        curlshim_fire_due_timer(loop);
        return 0;
    }
    int wait_ms = max_wait_ms < 0 ? 0 : max_wait_ms;
    if (loop->timer_deadline_ns >= 0) {
        long long remaining = loop->timer_deadline_ns - curlshim_now_ns();
        long long ms = remaining <= 0 ? 0 : (remaining + 999999LL) / 1000000LL;
        if (ms < wait_ms) wait_ms = (int)ms;
    }
    struct epoll_event events[64];
    int count = epoll_wait(loop->epfd, events, 64, wait_ms);
    if (count < 0) return errno == EINTR ? 0 : -1;
    for (int i = 0; i < count; i++) {
        int fd = events[i].data.fd;
        if (fd == loop->evfd) {
            uint64_t value;
            while (read(loop->evfd, &value, sizeof value) > 0) {}
            continue;
        }
        uint32_t e = events[i].events;
        int flags = ((e & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)) ? CURL_CSELECT_IN : 0)
                  | ((e & EPOLLOUT) ? CURL_CSELECT_OUT : 0)
                  | ((e & EPOLLERR) ? CURL_CSELECT_ERR : 0);
        int running = 0;
        curl_multi_socket_action(loop->multi, fd, flags, &running);
    }
    curlshim_fire_due_timer(loop);
    return count;
}

void curlshim_loop_wake(curlshim_loop *loop) {
    uint64_t one = 1;
    ssize_t written = write(loop->evfd, &one, sizeof one);
    (void)written; /* EAGAIN: the counter is already non-zero, so the loop is awake anyway */
}

void curlshim_loop_free(curlshim_loop *loop) {
    if (loop == NULL) return;
    close(loop->epfd);
    close(loop->evfd);
    free(loop);
}
