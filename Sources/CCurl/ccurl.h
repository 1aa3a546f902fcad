#ifndef CCURL_H
#define CCURL_H
#include <curl/curl.h>
#endif
