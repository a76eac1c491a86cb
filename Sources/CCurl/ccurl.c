#define _GNU_SOURCE /* POLLRDHUP */
#include <dlfcn.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/socket.h>
#include "ccurl.h"

static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd[], unsigned int, int, int *);
    CURLMcode (*multi_wakeup)(CURLM *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    const char *(*multi_strerror)(CURLMcode);
    CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    time_t (*getdate)(const char *, const time_t *);
    CURLSH *(*share_init)(void);
    CURLSHcode (*share_setopt)(CURLSH *, CURLSHoption, ...);
    CURLSHcode (*share_cleanup)(CURLSH *);
    CURLcode (*easy_pause)(CURL *, int);
    CURLcode (*easy_perform)(CURL *);
} fn;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static char load_error[512];

#define BIND(field, name)                                                        \
    if (!(*(void **)(&fn.field) = dlsym(lib, name))) {                           \
        snprintf(load_error, sizeof load_error, "libcurl lacks %s", name);       \
        return;                                                                  \
    }

static void load(void) {
    /* RTLD_LAZY: symbols of libcurl's large dependency tree are bound when first called, not all at load. */
    void *lib = dlopen("libcurl.so.4", RTLD_LAZY | RTLD_LOCAL);
    if (!lib) {
        snprintf(load_error, sizeof load_error, "cannot load libcurl.so.4 (install libcurl4): %s", dlerror());
        return;
    }
    BIND(global_init, "curl_global_init")
    BIND(easy_init, "curl_easy_init")
    BIND(easy_cleanup, "curl_easy_cleanup")
    BIND(easy_reset, "curl_easy_reset")
    BIND(easy_strerror, "curl_easy_strerror")
    BIND(easy_setopt, "curl_easy_setopt")
    BIND(easy_getinfo, "curl_easy_getinfo")
    BIND(multi_init, "curl_multi_init")
    BIND(multi_cleanup, "curl_multi_cleanup")
    BIND(multi_add_handle, "curl_multi_add_handle")
    BIND(multi_remove_handle, "curl_multi_remove_handle")
    BIND(multi_perform, "curl_multi_perform")
    BIND(multi_poll, "curl_multi_poll")
    BIND(multi_wakeup, "curl_multi_wakeup")
    BIND(multi_info_read, "curl_multi_info_read")
    BIND(multi_strerror, "curl_multi_strerror")
    BIND(multi_setopt, "curl_multi_setopt")
    BIND(slist_append, "curl_slist_append")
    BIND(slist_free_all, "curl_slist_free_all")
    BIND(getdate, "curl_getdate")
    BIND(share_init, "curl_share_init")
    BIND(share_setopt, "curl_share_setopt")
    BIND(share_cleanup, "curl_share_cleanup")
    BIND(easy_pause, "curl_easy_pause")
    BIND(easy_perform, "curl_easy_perform")
    /* Each transfer allocates and frees libcurl's receive buffer (64 KiB, CURLOPT_BUFFERSIZE) and a 64 KiB write buffer.
       With glibc's defaults the first is mmapped and the freed top of a thread's heap is handed
       back with MADV_DONTNEED, so every transfer faults its buffers in afresh (thousands of page
       faults per seed). Buffers of this size stay on the heap, and the heap keeps a few MiB. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    mallopt(M_TRIM_THRESHOLD, 8 << 20);
    if (fn.global_init(CURL_GLOBAL_ALL) != CURLE_OK) {
        snprintf(load_error, sizeof load_error, "curl_global_init failed");
        return;
    }
    loaded = 1;
}

int ccurl_load(void) {
    pthread_once(&once, load);
    return loaded;
}

static void *load_thread(void *unused) {
    (void)unused;
    ccurl_load();
    return NULL;
}

/* Set by the constructor and read on the way out, both on the main thread. */
static int loading_in_background;

void ccurl_load_in_background(void) {
    pthread_t thread;
    pthread_attr_t attributes;
    if (pthread_attr_init(&attributes) != 0) return;
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    /* No thread: the first download loads libcurl itself. */
    if (pthread_create(&thread, &attributes, load_thread, NULL) == 0) loading_in_background = 1;
    pthread_attr_destroy(&attributes);
}

void ccurl_settle(void) {
    if (loading_in_background) (void)ccurl_load();
}

const char *ccurl_load_error(void) { return load_error; }

CURLcode ccurl_global_init(void) { return ccurl_load() ? CURLE_OK : CURLE_FAILED_INIT; }

CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value) { return fn.easy_setopt(handle, option, value); }
CURLcode ccurl_setopt_ptr(CURL *handle, CURLoption option, void *value) { return fn.easy_setopt(handle, option, value); }
CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value) { return fn.easy_setopt(handle, option, value); }
CURLcode ccurl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) { return fn.easy_setopt(handle, option, value); }
CURLcode ccurl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) { return fn.easy_setopt(handle, option, value); }
CURLcode ccurl_setopt_write_callback(CURL *handle, ccurl_data_callback callback) { return fn.easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback); }

static int receive_buffer_sockopt(void *clientp, curl_socket_t fd, curlsocktype purpose) {
    int bytes = (int)(intptr_t)clientp;
    if (purpose == CURLSOCKTYPE_IPCXN && bytes > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
    return CURL_SOCKOPT_OK;
}

CURLcode ccurl_easy_unpause(CURL *handle) { return fn.easy_pause(handle, CURLPAUSE_CONT); }

CURLcode ccurl_setopt_receive_buffer(CURL *handle, int bytes) {
    if (bytes <= 0) return fn.easy_setopt(handle, CURLOPT_SOCKOPTFUNCTION, (curl_sockopt_callback)NULL);
    fn.easy_setopt(handle, CURLOPT_SOCKOPTDATA, (void *)(intptr_t)bytes);
    return fn.easy_setopt(handle, CURLOPT_SOCKOPTFUNCTION, receive_buffer_sockopt);
}
CURLcode ccurl_setopt_header_callback(CURL *handle, ccurl_data_callback callback) { return fn.easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback); }
CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value) { return fn.easy_getinfo(handle, info, value); }
CURLcode ccurl_getinfo_string(CURL *handle, CURLINFO info, const char **value) { return fn.easy_getinfo(handle, info, value); }
CURLcode ccurl_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value) { return fn.easy_getinfo(handle, info, value); }
CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) { return fn.multi_setopt(multi, option, value); }

CURL *ccurl_easy_init(void) { return fn.easy_init(); }
void ccurl_easy_cleanup(CURL *handle) { fn.easy_cleanup(handle); }
void ccurl_easy_reset(CURL *handle) { fn.easy_reset(handle); }
CURLcode ccurl_easy_perform(CURL *handle) { return fn.easy_perform(handle); }
const char *ccurl_easy_strerror(CURLcode code) { return fn.easy_strerror(code); }
CURLM *ccurl_multi_init(void) { return fn.multi_init(); }
CURLMcode ccurl_multi_cleanup(CURLM *multi) { return fn.multi_cleanup(multi); }
CURLMcode ccurl_multi_add_handle(CURLM *multi, CURL *handle) { return fn.multi_add_handle(multi, handle); }
CURLMcode ccurl_multi_remove_handle(CURLM *multi, CURL *handle) { return fn.multi_remove_handle(multi, handle); }
CURLMcode ccurl_multi_perform(CURLM *multi, int *running) { return fn.multi_perform(multi, running); }
CURLMcode ccurl_multi_poll(CURLM *multi, int timeout_ms) { return fn.multi_poll(multi, NULL, 0, timeout_ms, NULL); }
CURLMcode ccurl_multi_wakeup(CURLM *multi) { return fn.multi_wakeup(multi); }
CURLMsg *ccurl_multi_info_read(CURLM *multi, int *queued) { return fn.multi_info_read(multi, queued); }
const char *ccurl_multi_strerror(CURLMcode code) { return fn.multi_strerror(code); }
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *text) { return fn.slist_append(list, text); }
void ccurl_slist_free_all(struct curl_slist *list) { fn.slist_free_all(list); }
long long ccurl_getdate(const char *text) { return ccurl_load() ? (long long)fn.getdate(text, NULL) : -1; }

long ccurl_pipe_multiplex(void) { return CURLPIPE_MULTIPLEX; }
int ccurl_msg_is_done(const CURLMsg *msg) { return msg->msg == CURLMSG_DONE; }
CURL *ccurl_msg_easy(const CURLMsg *msg) { return msg->easy_handle; }
CURLcode ccurl_msg_result(const CURLMsg *msg) { return msg->data.result; }

int ccurl_active_socket(CURL *handle) {
    curl_socket_t fd = CURL_SOCKET_BAD;
    if (fn.easy_getinfo(handle, CURLINFO_ACTIVESOCKET, &fd) != CURLE_OK || fd == CURL_SOCKET_BAD) return -1;
    return (int)fd;
}

int ccurl_socket_closed_by_peer(int fd) {
    struct pollfd probe = {.fd = fd, .events = POLLIN | POLLRDHUP};
    if (poll(&probe, 1, 0) != 1) return 0;
    return (probe.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

/* The share's data is used by the download loops' threads at once: one mutex per kind of data. */
struct ccurl_share {
    CURLSH *share;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
};

static void share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *user) {
    (void)handle;
    (void)access;
    pthread_mutex_lock(&((struct ccurl_share *)user)->locks[data]);
}

static void share_unlock(CURL *handle, curl_lock_data data, void *user) {
    (void)handle;
    pthread_mutex_unlock(&((struct ccurl_share *)user)->locks[data]);
}

struct ccurl_share *ccurl_share_new(void) {
    if (!ccurl_load()) return NULL;
    struct ccurl_share *shared = calloc(1, sizeof *shared);
    if (!shared) return NULL;
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_init(&shared->locks[i], NULL);
    shared->share = fn.share_init();
    if (!shared->share) {
        free(shared);
        return NULL;
    }
    fn.share_setopt(shared->share, CURLSHOPT_USERDATA, shared);
    fn.share_setopt(shared->share, CURLSHOPT_LOCKFUNC, share_lock);
    fn.share_setopt(shared->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    fn.share_setopt(shared->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    fn.share_setopt(shared->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    return shared;
}

void *ccurl_share_handle(struct ccurl_share *shared) { return shared->share; }

void ccurl_share_free(struct ccurl_share *shared) {
    if (!shared) return;
    fn.share_cleanup(shared->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_destroy(&shared->locks[i]);
    free(shared);
}
