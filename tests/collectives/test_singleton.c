/* test_singleton.c: what a tool started without mpirun asks of Open MPI
 * before MPI_Init (coll_singleton_defaults): the in-process messaging layer
 * when nothing chose one, the user's own choice when something did, and
 * nothing at all under a launcher.  Pure environment logic: each case sets
 * the environment itself, so the test runs under mpirun or without. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "coll_internal.h"

static const char *const launcher_vars[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE" };

/* No launcher and no choice: every case starts here. */
static int clean_environment(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof launcher_vars / sizeof launcher_vars[0]; i++)
        unsetenv(launcher_vars[i]);
    unsetenv("OMPI_MCA_pml");
    unsetenv("OMPI_MCA_ess_singleton_isolated");
    unsetenv("OMPI_MCA_orte_tmpdir_base");
    return 0;
}

static void test_a_singleton_takes_the_in_process_layer(void **state)
{
    (void)state;
    coll_singleton_defaults();
    assert_non_null(getenv("OMPI_MCA_pml"));
    assert_string_equal(getenv("OMPI_MCA_pml"), "ob1");
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
    assert_non_null(getenv("OMPI_MCA_ess_singleton_isolated"));
    assert_string_equal(getenv("OMPI_MCA_ess_singleton_isolated"), "1");
    /* without the daemon, a session base of its own: two at once would
     * share Open MPI's fixed directory name and remove it under each other */
    const char *base = getenv("OMPI_MCA_orte_tmpdir_base");
    assert_non_null(base);
    struct stat st;
    assert_int_equal(stat(base, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
#endif
}

static void test_the_users_choice_stands(void **state)
{
    (void)state;
    setenv("OMPI_MCA_pml", "ucx", 1);
    setenv("OMPI_MCA_ess_singleton_isolated", "0", 1);
    coll_singleton_defaults();
    assert_string_equal(getenv("OMPI_MCA_pml"), "ucx");
    assert_string_equal(getenv("OMPI_MCA_ess_singleton_isolated"), "0");
}

static void test_a_launched_rank_is_left_alone(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof launcher_vars / sizeof launcher_vars[0]; i++) {
        clean_environment(NULL);
        setenv(launcher_vars[i], "0", 1);
        coll_singleton_defaults();
        assert_null(getenv("OMPI_MCA_pml"));
        assert_null(getenv("OMPI_MCA_ess_singleton_isolated"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_singleton_takes_the_in_process_layer, clean_environment),
        cmocka_unit_test_setup(test_the_users_choice_stands, clean_environment),
        cmocka_unit_test_setup(test_a_launched_rank_is_left_alone, clean_environment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
