/* SCRY_ARENA_DEBUG (see arena.h) is read once per process, at the first sc_arena_init: a
 * request makes several arenas and getenv walks the whole environment. Kept apart from arena.h
 * (which nearly every file includes) because only tests change the variable at run time. */
#ifndef SC_BASE_ARENA_DEBUG_H
#define SC_BASE_ARENA_DEBUG_H

/* Re-reads SCRY_ARENA_DEBUG; arenas initialised afterwards follow the new value. */
void sc_arena_debug_reload(void);

#endif
