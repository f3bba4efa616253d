/* libFuzzer target: weft_spec_parse never crashes, and whatever it accepts
 * formats back to text that parses to the same spec. */
#include <stdlib.h>
#include <string.h>
#include <weft.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char text[256];
    if (size >= sizeof text)
        size = sizeof text - 1;
    memcpy(text, data, size);
    text[size] = '\0';

    weft_spec spec;
    if (weft_spec_parse(text, &spec) != 0)
        return 0;

    char again[256];
    int n = weft_spec_format(&spec, again, sizeof again);
    if (n < 0 || (size_t)n >= sizeof again)
        abort();
    weft_spec round;
    if (weft_spec_parse(again, &round) != 0)
        abort();
    if (round.dtype != spec.dtype || round.rank != spec.rank)
        abort();
    for (int i = 0; i < spec.rank; i++)
        if (round.dims[i] != spec.dims[i])
            abort();
    return 0;
}
