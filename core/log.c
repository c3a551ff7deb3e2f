#include "log.h"
#include "buf.h"
#include "termsafe.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static enum log_level cur_level = LOG_INFO;
static int use_color;
static int tty;
static int live_shown;
static time_t last_plain;

void log_setup(enum log_level level)
{
	const char *nc = getenv("NO_COLOR");
	cur_level = level;
	tty = isatty(2);
	use_color = tty && !(nc && *nc) && getenv("TERM") && *getenv("TERM") &&
		    getenv("TERM")[0] != 'd'; /* "dumb" */
}

enum log_level log_get_level(void)
{
	return cur_level;
}

int log_is_tty(void)
{
	return tty;
}

static void clear_live(void)
{
	if (live_shown) {
		fputs("\r\033[K", stderr);
		live_shown = 0;
	}
}

void log_msg(enum log_level lv, const char *fmt, ...)
{
	static const char *names[] = { "error", "warning", "info", "debug" };
	static const char *colors[] = { "\033[31m", "\033[33m", "", "\033[2m" };
	struct buf b = BUF_INIT;
	va_list ap;

	if (lv > cur_level)
		return;
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	/* messages carry server and file text: no control reaches the terminal */
	termsafe_buf(&b, TERMSAFE_KEEP_NL);
	clear_live();
	if (lv == LOG_INFO)
		fprintf(stderr, "%s\n", b.s);
	else if (use_color)
		fprintf(stderr, "%s%s:\033[0m %s\n", colors[lv], names[lv], b.s);
	else
		fprintf(stderr, "%s: %s\n", names[lv], b.s);
	buf_release(&b);
}

void log_progress(const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	if (cur_level < LOG_INFO)
		return;
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	termsafe_buf(&b, 0);
	if (tty) {
		fprintf(stderr, "\r\033[K%s", b.s);
		live_shown = 1;
	} else {
		time_t now = time(NULL);
		if (now - last_plain >= 5) {
			fprintf(stderr, "%s\n", b.s);
			last_plain = now;
		}
	}
	fflush(stderr);
	buf_release(&b);
}

void log_progress_done(void)
{
	if (live_shown) {
		fputc('\n', stderr);
		live_shown = 0;
	}
}
