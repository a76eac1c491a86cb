#ifndef CPLATFORM_H
#define CPLATFORM_H
/* glibc declares these only under _GNU_SOURCE, which Swift's Glibc module does not set. */
int cplatform_syncfs(int fd);
#endif
