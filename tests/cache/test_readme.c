/* The README's tour is examples/tour.c, word for word, so that the code a
 * reader sees first is code that compiles (meson builds the example) and
 * runs (the demo runs it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static char *slurp(const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", WEFT_TEST_SRC_ROOT, rel);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

Test(readme, tour_is_examples_tour_c, .timeout = 10)
{
    char *readme = slurp("README.md");
    char *tour = slurp("examples/tour.c");
    const char *start = strstr(readme, "## A short tour");
    cr_assert_not_null(start, "README.md has no tour section");
    start = strstr(start, "```c\n");
    cr_assert_not_null(start, "the tour has no C block");
    start += strlen("```c\n");
    const char *end = strstr(start, "```");
    cr_assert_not_null(end);
    cr_assert_eq((size_t)(end - start), strlen(tour),
                 "the README's tour differs in length from examples/tour.c");
    cr_assert(memcmp(start, tour, strlen(tour)) == 0,
              "the README's tour differs from examples/tour.c");
    free(readme);
    free(tour);
}
