#ifndef CURLSHIM_H
#define CURLSHIM_H

#include <curl/curl.h>
#include <stddef.h>

/// Initialises libcurl once per process (thread-safe): turns off OpenSSL's atexit cleanup,
/// calls curl_global_init and ignores SIGPIPE. Returns the CURLcode of curl_global_init.
int curlshim_global_init(void);
/// Ignores SIGPIPE process-wide (cheap: one system call), so a client ignores it from construction on.
void curlshim_ignore_sigpipe(void);

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

/// The handler currently installed for SIGPIPE is SIG_IGN.
int curlshim_sigpipe_ignored(void);

/// A non-blocking, close-on-exec eventfd for wake-ups, or -1 with errno set.
int curlshim_eventfd(void);
/// Adds one to the eventfd's counter (makes it readable).
void curlshim_eventfd_signal(int fd);

/* Names the calling thread (at most 15 characters on Linux). */
void curlshim_set_thread_name(const char *name);
/// Reads (and so resets) the eventfd's counter; does nothing when it is zero.
void curlshim_eventfd_drain(int fd);

#endif
