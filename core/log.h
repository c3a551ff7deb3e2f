/* Logging. Lines go to stderr; on a TTY a live progress line is kept at
 * the bottom and redrawn, otherwise progress is printed as plain lines at
 * most every few seconds. NO_COLOR disables colour. Library code logs;
 * only the CLI decides the level (KFORGE_LOG or -v/-q). */
#ifndef KF_LOG_H
#define KF_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_setup(enum log_level level);        /* reads NO_COLOR, isatty */
enum log_level log_get_level(void);
void log_msg(enum log_level lv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* Live progress: replaces the line on a TTY; rate-limited plain lines
 * elsewhere. progress_done() ends the live line. */
void log_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_progress_done(void);
int log_is_tty(void);

#endif
