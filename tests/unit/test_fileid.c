/* SPDX-License-Identifier: MIT */
/*
 * lib/fileid.c: SHA-256 on the FIPS 180-4 examples and on lengths around
 * the padding's block boundaries (checked with sha256sum), and the names
 * and descriptions of each kind of identity.
 */
#include "fileid.h"

#include "t.h"

#include <stdlib.h>
#include <string.h>

static void hex_of(const uint8_t *b, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static int test_sha256(void)
{
	static const struct {
		size_t a; /* that many 'a', when text is NULL */
		const char *text, *want;
	} cases[] = {
	    {0, "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	    {0, "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	    {0, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	    {55, NULL, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
	    {56, NULL, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
	    {63, NULL, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
	    {64, NULL, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
	    {119, NULL, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
	    {120, NULL, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
	    {1000000, NULL, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
	};
	uint8_t out[XP_SHA256_LEN];
	char got[2 * XP_SHA256_LEN + 1];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *buf = NULL;
		const char *data = cases[i].text;
		size_t len = data ? strlen(data) : cases[i].a;

		if (!data) {
			buf = malloc(len);
			T_ASSERT(buf != NULL);
			memset(buf, 'a', len);
			data = buf;
		}
		xp_sha256(data, len, out);
		hex_of(out, sizeof(out), got);
		free(buf);
		T_EQ_STR(got, cases[i].want);
	}
	return T_OK;
}

static int test_names(void)
{
	struct xp_file_id gnu = {.kind = XP_FILE_ID_GNU,
				 .len = 4,
				 .bytes = {0x1a, 0x2b, 0x3c, 0x4d}},
			  go = {.kind = XP_FILE_ID_GO, .len = 7}, sha = {.kind = XP_FILE_ID_SHA256},
			  none = {0}, odd = {.kind = 9, .len = 1};
	char buf[XP_FILE_ID_TEXT], small[8];

	memcpy(go.bytes, "ab/c\x01z", 7);
	xp_sha256("", 0, sha.bytes);
	sha.len = XP_SHA256_LEN;
	xp_file_id_name(&gnu, buf, sizeof(buf));
	T_EQ_STR(buf, "1a2b3c4d"); /* the cache's names of GNU build-ids stay what they were */
	xp_file_id_name(&go, buf, sizeof(buf));
	T_EQ_STR(buf, "go-61622f63017a00");
	xp_file_id_name(&sha, buf, sizeof(buf));
	T_EQ_STR(buf, "sha256-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	xp_file_id_name(&none, buf, sizeof(buf));
	T_EQ_STR(buf, "");
	xp_file_id_name(&odd, buf, sizeof(buf));
	T_EQ_STR(buf, "");
	xp_file_id_name(&gnu, small, sizeof(small));
	T_EQ_STR(small, "1a2b3c"); /* cut, never overrun */
	xp_file_id_describe(&gnu, buf, sizeof(buf));
	T_EQ_STR(buf, "GNU build-id 1a2b3c4d");
	xp_file_id_describe(&go, buf, sizeof(buf));
	T_EQ_STR(buf, "Go build ID ab/c?z?");
	xp_file_id_describe(&sha, buf, sizeof(buf));
	T_ASSERT(!strncmp(buf, "SHA-256 e3b0c442", 16));
	xp_file_id_describe(&go, small, sizeof(small));
	T_EQ_STR(small, "Go buil");
	T_ASSERT(xp_file_id_equal(&gnu, &gnu));
	T_ASSERT(!xp_file_id_equal(&gnu, &go));
	T_ASSERT(!xp_file_id_equal(&none, &none));
	return T_OK;
}

T_MAIN(T_CASE(test_sha256), T_CASE(test_names))
