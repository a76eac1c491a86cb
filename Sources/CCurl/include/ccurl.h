#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

#include <curl/curl.h>
#include <sys/types.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call.
   One function per argument kind keeps the shim typed and tiny. */

CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode ccurl_setopt_ptr(CURL *handle, CURLoption option, void *value);
CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode ccurl_setopt_off(CURL *handle, CURLoption option, curl_off_t value);
CURLcode ccurl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);

typedef size_t (*ccurl_data_callback)(char *data, size_t size, size_t nmemb, void *userdata);
CURLcode ccurl_setopt_write_callback(CURL *handle, ccurl_data_callback callback);
CURLcode ccurl_setopt_header_callback(CURL *handle, ccurl_data_callback callback);

CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode ccurl_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode ccurl_getinfo_ptr(CURL *handle, CURLINFO info, void **value);
CURLcode ccurl_getinfo_string(CURL *handle, CURLINFO info, const char **value);

CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/* CURLMsg holds a union; Swift imports it awkwardly, so read the two fields here. */
int ccurl_msg_is_done(const CURLMsg *msg);
CURL *ccurl_msg_easy(const CURLMsg *msg);
CURLcode ccurl_msg_result(const CURLMsg *msg);

/* CURL_GLOBAL_ALL and CURLPIPE_MULTIPLEX are macros Swift does not import reliably. */
CURLcode ccurl_global_init(void);
long ccurl_pipe_multiplex(void);

#endif
