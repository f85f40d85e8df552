/* SPDX-License-Identifier: Apache-2.0 */
/* A shared library that is not a Kiln plugin: it exports no kiln_plugin_describe. */
int kiln_test_not_a_plugin(void) {
    return 7;
}
