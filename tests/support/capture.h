/* Capturing what a test's code prints on stdout, for the tests that run
 * the guide's snippets and compare their output with the guide's. */
#ifndef WEFT_TEST_CAPTURE_H
#define WEFT_TEST_CAPTURE_H

#include <criterion/criterion.h>
#include <stdio.h>

static FILE *capture_saved_stdout;
static char *capture_buf;
static size_t capture_len;

/* glibc's stdout is an assignable variable: printf and puts write to it. */
static inline void capture_begin(void)
{
    fflush(stdout);
    capture_saved_stdout = stdout;
    FILE *m = open_memstream(&capture_buf, &capture_len);
    cr_assert_not_null(m);
    stdout = m;
}

/* Returns what was printed since capture_begin (caller frees). */
static inline char *capture_end(void)
{
    fclose(stdout);
    stdout = capture_saved_stdout;
    char *s = capture_buf;
    capture_buf = NULL;
    fputs(s, stdout);  /* still shown when the test runs verbosely */
    return s;
}

#endif
