#ifndef CURLSHIM_H
#define CURLSHIM_H

#include <curl/curl.h>
#include <stddef.h>

/// Initialises libcurl once per process (thread-safe): turns off OpenSSL's atexit cleanup,
/// calls curl_global_init and ignores SIGPIPE. Returns the CURLcode of curl_global_init.
int curlshim_global_init(void);

/// Non-variadic wrappers for curl_easy_setopt, one per argument type.
CURLcode curlshim_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode curlshim_setopt_off(CURL *handle, CURLoption option, curl_off_t value);
CURLcode curlshim_setopt_ptr(CURL *handle, CURLoption option, void *value);
CURLcode curlshim_setopt_str(CURL *handle, CURLoption option, const char *value);
CURLcode curlshim_setopt_write_cb(CURL *handle, CURLoption option, curl_write_callback cb);
CURLcode curlshim_setopt_xferinfo_cb(CURL *handle, curl_xferinfo_callback cb);

/// Non-variadic wrappers for curl_easy_getinfo.
CURLcode curlshim_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode curlshim_getinfo_ptr(CURL *handle, CURLINFO info, void **value);
CURLcode curlshim_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value);

/// Non-variadic wrapper for curl_multi_setopt.
CURLMcode curlshim_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/// Flattened curl_multi_info_read: returns 1 and fills `easy`/`result` for the next DONE message,
/// 0 when no message is left.
int curlshim_multi_info_read(CURLM *multi, CURL **easy, CURLcode *result);

/// An event loop for a multi handle on `curl_multi_socket_action`: an epoll set holding the sockets libcurl asks
/// for (its socket callback) and an eventfd for wake-ups, and libcurl's timer (its timer callback). Owned and used by
/// one thread, except `curlshim_loop_wake`, which any thread may call while the loop exists.
typedef struct curlshim_loop curlshim_loop;

/// Creates the loop and installs its socket and timer callbacks on `multi`. NULL on failure (errno set).
curlshim_loop *curlshim_loop_new(CURLM *multi);

/// When libcurl's timer is due, fires it and returns 0 at once, without waiting. Otherwise waits at most
/// `max_wait_ms` (less when the timer is due sooner) for socket activity or a wake-up, hands every ready socket to
/// `curl_multi_socket_action`, and fires the timer if it became due. Returns the number of epoll events handled
/// (0 on a timeout), or -1 with errno when epoll_wait failed (EINTR is not a failure). Read libcurl's messages after
/// every call: a transfer may have finished inside it.
int curlshim_loop_wait(curlshim_loop *loop, int max_wait_ms);

/// Wakes a waiting `curlshim_loop_wait` (one eventfd write). Thread-safe.
void curlshim_loop_wake(curlshim_loop *loop);

/// Closes the epoll set and the eventfd and frees the loop. Call after `curl_multi_cleanup`.
void curlshim_loop_free(curlshim_loop *loop);

/// The handler currently installed for SIGPIPE is SIG_IGN.
int curlshim_sigpipe_ignored(void);

#endif
