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
    return test_read_file(path);
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
