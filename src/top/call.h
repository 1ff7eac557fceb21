/*
 * call.h - the interface of call.c (orcu_call() and its lazy variant)
 * to the modules beside it.
 */
#ifndef ORCU_CALL_H
#define ORCU_CALL_H

/* call.c */
void orcu__flush_lazy_all(void);

#endif
