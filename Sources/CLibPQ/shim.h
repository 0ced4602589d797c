// libpq from Debian (libpq-dev): the PostgreSQL client library. The eventfd and thread names the
// store thread uses are the process's plumbing (CPlumbing, through Plumbing).
#ifndef SWIPED_CLIBPQ_SHIM_H
#define SWIPED_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#include <poll.h>
#include <unistd.h>
#endif
