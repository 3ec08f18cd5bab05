/* mechsym C runtime: the prelude of a generated mechanism's source (after ms_prefix.h, before any system
   header): the POSIX feature macro, the C headers the runtime uses and the SIGINT handling of long calls. */
#ifndef MS_PRELUDE_H
#define MS_PRELUDE_H
#if !defined(_POSIX_C_SOURCE) && (defined(__unix__) || defined(__APPLE__))
#define _POSIX_C_SOURCE 200112L /* sigaction, which restores the previous handler exactly */
#endif
#include <math.h>
#include <signal.h>
#include <string.h>

/* SIGINT during a long call: the handler raises ms_stop, the loops poll it, the call returns MS_INTERRUPTED
   (ms_constants.h) and puts the previous handler back. A call made while another one catches (a nested or
   concurrent call) leaves the handler to that one; an ignored SIGINT stays ignored. */
static volatile sig_atomic_t ms_stop = 0;
static void ms_on_sigint(int sig) { (void)sig; ms_stop = 1; }
#if defined(_POSIX_VERSION) || defined(SA_RESTART)
typedef struct sigaction ms_handler;
static int ms_catch(ms_handler *old) {
  struct sigaction sa;
  if (sigaction(SIGINT, NULL, old) != 0 || old->sa_handler == ms_on_sigint) return 0;
  ms_stop = 0;
  if (old->sa_handler == SIG_IGN) return 0;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = ms_on_sigint;
  sigemptyset(&sa.sa_mask);
  return sigaction(SIGINT, &sa, NULL) == 0;
}
static void ms_release(int caught, const ms_handler *old) { if (caught) sigaction(SIGINT, old, NULL); }
#else
typedef void (*ms_handler)(int);
static int ms_catch(ms_handler *old) {
  *old = signal(SIGINT, ms_on_sigint);
  if (*old == SIG_ERR) return 0;
  if (*old == ms_on_sigint) return 0;
  ms_stop = 0;
  if (*old == SIG_IGN) { signal(SIGINT, SIG_IGN); return 0; }
  return 1;
}
static void ms_release(int caught, const ms_handler *old) { if (caught) signal(SIGINT, *old); }
#endif
#endif
