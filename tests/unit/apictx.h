/* apictx.h — the no-device context test_api and test_api_oom share: sm_90 as an H100 has it, the
 * shipped wisdom only. Include after cmocka.h and engine.h. */
#ifndef TEST_APICTX_H
#define TEST_APICTX_H

static inline engine_ctx *no_device_ctx(void)
{
    engine_options o;
    engine_options_init(&o);
    o.no_device = 1;
    o.arch = 0; /* sm_90 as an H100 has it: tc32 wisdom entries build for sm_90a, as on the GPU */
    o.wisdom_dir = "wisdom";
    o.user_wisdom_dir = ""; /* the shipped wisdom only */
    o.device_name = "NVIDIA H100 80GB HBM3";
    engine_ctx *ctx = NULL;
    assert_int_equal(engine_create(&ctx, &o), ENGINE_SUCCESS);
    return ctx;
}

#endif
