#define _GNU_SOURCE
#include "curlshim.h"
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

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

void curlshim_ignore_sigpipe(void) {
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

int curlshim_eventfd(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}
void curlshim_eventfd_signal(int fd) {
    /* Fails only when the counter would overflow (then it is readable anyway) or the fd is bad. */
    (void)eventfd_write(fd, 1);
}
void curlshim_eventfd_drain(int fd) {
    eventfd_t value;
    (void)eventfd_read(fd, &value);
}

void curlshim_set_thread_name(const char *name) {
    /* Names the calling thread as top, gdb and /proc show it (Linux: at most 15 characters). */
#if defined(__APPLE__)
    (void)pthread_setname_np(name);
#else
    (void)pthread_setname_np(pthread_self(), name);
#endif
}
