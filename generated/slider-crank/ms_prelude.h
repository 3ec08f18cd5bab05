/* mechsym C runtime: the prelude of a generated mechanism's source (after ms_prefix.h, before any system
   header): the POSIX feature macro, the C headers the runtime uses and the handling of SIGINT, SIGTERM and SIGHUP in long calls. */
#ifndef MS_PRELUDE_H
#define MS_PRELUDE_H
#if !defined(_POSIX_C_SOURCE) && (defined(__unix__) || defined(__APPLE__))
#define _POSIX_C_SOURCE 200112L /* sigaction, which restores the previous handler exactly */
#endif
#include <math.h>
#include <signal.h>
#include <string.h>

/* A signal during a long call: the handler raises ms_stop, the loops poll it, the call returns MS_INTERRUPTED
   (ms_constants.h) and puts the previous handlers back. SIGINT is caught unless ignored; SIGTERM and SIGHUP
   only where the host program handles them (mechsym's command line does), whose handler is then called
   too, so that the host ends as it would have, knowing which signal it was. A call made while another one
   catches (a nested or concurrent call) leaves the handlers to that one; an ignored signal stays ignored.
   Without sigaction only SIGINT is caught. */
static volatile sig_atomic_t ms_stop = 0;
#if defined(__unix__) || defined(__APPLE__) /* sigaction (the feature macro above) */
#define MS_NSIG 3
static const int ms_signals[MS_NSIG] = {SIGINT, SIGTERM, SIGHUP};
static void (*ms_chain[MS_NSIG])(int);
static void ms_on_signal(int sig) {
  int i;
  ms_stop = 1;
  for (i = 0; i < MS_NSIG; i++)
    if (ms_signals[i] == sig && ms_chain[i]) ms_chain[i](sig);
}
typedef struct { struct sigaction old[MS_NSIG]; int caught[MS_NSIG]; } ms_handler;
static int ms_catch(ms_handler *h) {
  struct sigaction sa;
  int i, any = 0;
  memset(h, 0, sizeof *h);
  if (sigaction(SIGINT, NULL, &h->old[0]) != 0 || h->old[0].sa_handler == ms_on_signal) return 0;
  ms_stop = 0;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = ms_on_signal;
  sigemptyset(&sa.sa_mask);
  for (i = 0; i < MS_NSIG; i++) {
    const struct sigaction *prev = &h->old[i];
    if (i > 0 && sigaction(ms_signals[i], NULL, &h->old[i]) != 0) continue;
    if (!(prev->sa_flags & SA_SIGINFO) && prev->sa_handler == SIG_IGN) continue;
    if (i > 0 && ((prev->sa_flags & SA_SIGINFO) || prev->sa_handler == SIG_DFL)) continue;
    ms_chain[i] = i > 0 ? prev->sa_handler : 0;
    h->caught[i] = sigaction(ms_signals[i], &sa, NULL) == 0;
    any |= h->caught[i];
  }
  return any;
}
static void ms_release(int caught, const ms_handler *h) {
  int i;
  if (!caught) return;
  for (i = 0; i < MS_NSIG; i++)
    if (h->caught[i]) sigaction(ms_signals[i], &h->old[i], NULL);
}
#else
static void ms_on_signal(int sig) { (void)sig; ms_stop = 1; }
typedef void (*ms_handler)(int);
static int ms_catch(ms_handler *old) {
  *old = signal(SIGINT, ms_on_signal);
  if (*old == SIG_ERR) return 0;
  if (*old == ms_on_signal) return 0;
  ms_stop = 0;
  if (*old == SIG_IGN) { signal(SIGINT, SIG_IGN); return 0; }
  return 1;
}
static void ms_release(int caught, const ms_handler *old) { if (caught) signal(SIGINT, *old); }
#endif
#endif
