#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

#include <curl/curl.h>
#include <sys/types.h>

/* libcurl is loaded with dlopen on first use rather than linked: its dependency tree (OpenSSL,
   Kerberos, LDAP, nghttp2, ...) costs ~8 ms of dynamic loading, which commands that never
   download (resolve from the cache, routes, verify, status) should not pay (B4).
   ccurl_load returns 1 when libcurl is usable; every other function requires it. */
int ccurl_load(void);
/* Starts ccurl_load on a thread of its own and returns at once: a command that will download
   overlaps libcurl's ~7 ms of dynamic loading with its own start-up. A later ccurl_load waits for it.
   Called once, from CStartup's constructor, for `sync` and `seed`. */
void ccurl_load_in_background(void);
/* Waits for a background load to finish, if one was started. A process must call it before it
   exits: libcurl's dependencies register exit handlers while they initialise (OpenSSL does),
   and exit running those beside an unfinished initialisation crashed about 2% of `sync` runs
   that failed before they needed libcurl (SIGSEGV instead of exit 5). */
void ccurl_settle(void);
const char *ccurl_load_error(void);

/* curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call.
   One function per argument kind keeps the shim typed and tiny. */
CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode ccurl_setopt_ptr(CURL *handle, CURLoption option, void *value);
CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode ccurl_setopt_off(CURL *handle, CURLoption option, curl_off_t value);
CURLcode ccurl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);

typedef size_t (*ccurl_data_callback)(char *data, size_t size, size_t nmemb, void *userdata);
CURLcode ccurl_setopt_write_callback(CURL *handle, ccurl_data_callback callback);
/* Sets SO_RCVBUF on the handle's sockets before they connect (0: the system's default). A small
   receive buffer lets a rate limit slow the sender, which otherwise fills the kernel's buffers. */
CURLcode ccurl_setopt_receive_buffer(CURL *handle, int bytes);
/* Resumes a transfer whose write callback returned CURL_WRITEFUNC_PAUSE. */
CURLcode ccurl_easy_unpause(CURL *handle);
CURLcode ccurl_setopt_header_callback(CURL *handle, ccurl_data_callback callback);

CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode ccurl_getinfo_string(CURL *handle, CURLINFO info, const char **value);
CURLcode ccurl_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value);

CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/* The plain entry points, forwarded to the loaded library. */
CURLcode ccurl_global_init(void);
CURL *ccurl_easy_init(void);
void ccurl_easy_cleanup(CURL *handle);
void ccurl_easy_reset(CURL *handle);
/* One blocking transfer on its own (the daemon's event reports: a POST now and then). */
CURLcode ccurl_easy_perform(CURL *handle);
const char *ccurl_easy_strerror(CURLcode code);
CURLM *ccurl_multi_init(void);
CURLMcode ccurl_multi_cleanup(CURLM *multi);
CURLMcode ccurl_multi_add_handle(CURLM *multi, CURL *handle);
CURLMcode ccurl_multi_remove_handle(CURLM *multi, CURL *handle);
CURLMcode ccurl_multi_perform(CURLM *multi, int *running);
CURLMcode ccurl_multi_poll(CURLM *multi, int timeout_ms);
/* Thread-safe: makes a ccurl_multi_poll in progress return now. */
CURLMcode ccurl_multi_wakeup(CURLM *multi);
CURLMsg *ccurl_multi_info_read(CURLM *multi, int *queued);
const char *ccurl_multi_strerror(CURLMcode code);
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *text);
void ccurl_slist_free_all(struct curl_slist *list);
/* Seconds since the epoch for an HTTP date, or -1. */
long long ccurl_getdate(const char *text);

/* CURLPIPE_MULTIPLEX is a macro Swift does not import reliably. */
long ccurl_pipe_multiplex(void);

/* CURLMsg holds a union; Swift imports it awkwardly, so read the two fields here. */
int ccurl_msg_is_done(const CURLMsg *msg);
CURL *ccurl_msg_easy(const CURLMsg *msg);
CURLcode ccurl_msg_result(const CURLMsg *msg);

/* The socket of a finished transfer's connection while libcurl keeps it open; -1 if none. */
int ccurl_active_socket(CURL *handle);
/* 1 when an idle connection's socket has something to read or has hung up: on an HTTP/1.1
   connection between requests that can only be the origin's close_notify and FIN. libcurl 7.88
   takes pending bytes on an idle TLS connection for a sign of life and sends the next request
   into it, to meet a reset. */
int ccurl_socket_closed_by_peer(int fd);

/* A share of TLS sessions and DNS answers between transfers, multi handles and threads (with its
   own locks), so a daemon's next poll resumes the TLS session of the last one. NULL without libcurl. */
struct ccurl_share;
struct ccurl_share *ccurl_share_new(void);
void *ccurl_share_handle(struct ccurl_share *shared);
void ccurl_share_free(struct ccurl_share *shared);

#endif
