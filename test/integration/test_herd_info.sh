#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# herd-info as a user runs it: components and their build, variables with their sources,
# selection, the fabric inventory, and clear errors for bad input.
. "$(dirname "$0")/lib.sh"

herd_info
expect_rc "herd-info runs" 0
expect_out "lists the package" "Package: herd"
for c in tcp ofi ucx; do
    expect_out "fabric $c is listed as a DSO" "MCA fabric: $c \(v[0-9.]+, (DSO .*herd_fabric_$c|static)"
done

# ompi-shim's endpoint framework: its components live inside libherd, its slots are fixed at
# configure time (docs/endpoint.md)
if grep -q 'HERD_ENDPOINT_DYNAMIC_SLOTS 1' "$HERD_BUILDDIR/ompi-shim/include/herd_endpoint_tags.h"
then
    expect_out "endpoint dynamic is listed, static" "MCA endpoint: dynamic \(v[0-9.]+, static\)"
    expect_out "endpoint slots: the run-time table's slot" \
        "MCA endpoint: compile-time tags: .*; run-time slots: in a table behind slot [0-9]+;"
else
    expect_no_out "endpoint dynamic is not built" "MCA endpoint: dynamic"
    expect_out "endpoint slots: no run-time table" \
        "run-time slots: none \(--disable-dynamic-endpoint-slots\)"
fi
expect_out "endpoint static is listed, static" "MCA endpoint: static \(v[0-9.]+, static\)"
herd_info --parsable --param endpoint all
expect_rc "herd-info --param endpoint all runs" 0
expect_out "parsable: endpoint components are inside libherd" \
    '^mca:endpoint:static:file:\(linked into libherd\)$'
expect_out "parsable: endpoint static's priority" \
    '^mca:endpoint:static:param:endpoint_static_priority:value:10$'
expect_out "parsable: sizeof(ompi_proc_t)" '^mca:endpoint:base:proc_size:[0-9]+$'
expect_out "parsable: whether procs have the run-time slot" \
    '^mca:endpoint:base:dynamic_slot:(yes|no)$'
# the btl framework (herd_send/herd_recv, docs/btl.md): its transports, inside libherd, each
# with its endpoint tag, and their variables
herd_info
for c in self sm tcp; do
    expect_out "btl $c is listed, static" "MCA btl: $c \(v[0-9.]+, static\)"
    expect_out "btl $c has its endpoint tag" "MCA endpoint: compile-time tags: .*$c \(slot [0-9]+, btl-$c\)"
done
herd_info --parsable --param btl all
expect_rc "herd-info --param btl all runs" 0
for v in btl btl_base_verbose btl_base_add_all btl_base_dso_path btl_self_priority btl_sm_priority btl_sm_num_cells \
    btl_sm_cell_size btl_tcp_priority btl_tcp_connect_timeout btl_tcp_max_message \
    btl_tcp_use_rm_endpoint; do
    expect_out "parsable: btl variable $v" "^mca:btl:[a-z]+:param:$v:value:"
done
# ucx, when built (UCX found): its front is in libherd, its variables shown without loading UCX
if [ -f "$HERD_BUILDDIR/ompi-shim/mca/btl/ucx/herd-btl-ucx.la" ]; then
    herd_info --parsable --param btl ucx --level 9
    for v in btl_ucx_priority btl_ucx_tls btl_ucx_eager_limit btl_ucx_error_handling \
        btl_ucx_close_timeout; do
        expect_out "parsable: btl variable $v" "^mca:btl:ucx:param:$v:value:"
    done
    herd_info
    expect_out "btl ucx is listed, static (its front)" "MCA btl: ucx \(v[0-9.]+, static\)"
    expect_out "btl ucx has its endpoint tag" \
        "MCA endpoint: compile-time tags: .*ucx \(slot [0-9]+, btl-ucx\)"
fi
# btl ofi, when built (libfabric found): its front is listed like the others, with its variables
if [ -f "$HERD_BUILDDIR/ompi-shim/mca/btl/ofi/herd-btl-ofi.la" ]; then
    herd_info
    expect_out "btl ofi is listed, static" "MCA btl: ofi \(v[0-9.]+, static\)"
    expect_out "btl ofi has its endpoint tag" \
        "MCA endpoint: compile-time tags: .*ofi \(slot [0-9]+, btl-ofi\)"
    herd_info --parsable --param btl all
    for v in btl_ofi_priority btl_ofi_provider btl_ofi_frag_size btl_ofi_recv_buffers \
        btl_ofi_timeout btl_ofi_use_rm_endpoint btl_ofi_max_message; do
        expect_out "parsable: btl variable $v" "^mca:btl:ofi:param:$v:value:"
    done
else
    echo "SKIP: btl ofi is not built (no libfabric): not listed"
fi

herd_info --all
expect_rc "herd-info --all runs" 0
expect_out "--all shows the selection variable" 'variable "fabric" = ""'
expect_out "--all shows a component variable with type and source" 'variable "fabric_tcp_if_include"'
expect_out "--all shows where values come from" 'source default'
expect_out "--all shows the core's component path" 'variable "component_path"'

herd_info --parsable --all
expect_rc "--parsable runs" 0
expect_out "parsable component build" '^mca:fabric:tcp:build:(dso|static)$'
expect_out "parsable variable source" '^mca:fabric:tcp:param:fabric_tcp_if_include:source:default$'
expect_out "parsable variable type" '^mca:fabric:base:param:fabric_base_verbose:type:int$'

# Sources: environment, command line, parameter file, precedence among them.
HERD_MCA_fabric_base_verbose=3 herd_info --parsable --param fabric base
expect_out "env value shown" '^mca:fabric:base:param:fabric_base_verbose:value:3$'
expect_out "env source shown" 'fabric_base_verbose:source:environment:HERD_MCA_fabric_base_verbose$'
HERD_MCA_fabric_base_verbose=3 herd_info --parsable --param fabric base --mca fabric_base_verbose 4
expect_out "--mca beats the environment" '^mca:fabric:base:param:fabric_base_verbose:value:4$'
expect_out "--mca source shown" 'fabric_base_verbose:source:command line'
printf '# a comment\n\nfabric_base_verbose = 2\n' > "$WORK/params.conf"
HERD_MCA_param_files=$WORK/params.conf herd_info --parsable --param fabric base
expect_out "param file value" '^mca:fabric:base:param:fabric_base_verbose:value:2$'
expect_out "param file source is file:line" "fabric_base_verbose:source:.*file:$WORK/params.conf:3\$"
HERD_MCA_param_files=$WORK/params.conf HERD_MCA_fabric_base_verbose=5 herd_info --parsable --param fabric base
expect_out "environment beats the param file" '^mca:fabric:base:param:fabric_base_verbose:value:5$'

# Bad values and names.
HERD_MCA_fabric_base_verbose=abc herd_info
expect_fail "a non-integer for an int variable fails"
expect_err "the error names the variable" "fabric_base_verbose"
expect_err "the error names the source" "HERD_MCA_fabric_base_verbose"
expect_err "the error names the bad value" "abc"
printf 'fabric_base_verbose\n' > "$WORK/bad.conf"
HERD_MCA_param_files=$WORK/bad.conf herd_info
expect_err "a param-file line without = is reported with file:line" "$WORK/bad.conf:1"
HERD_MCA_fabric_tcp_if_inclde=lo herd_info
expect_rc "an unknown variable is a warning, not an error" 0
expect_err "the warning suggests the closest name" "fabric_tcp_if_include"

# Selection.
HERD_MCA_fabric=ucx,^tcp herd_info --fabric
expect_fail "mixing include and exclude fails"
expect_err "the error lists the available components" "ofi, tcp, ucx"
HERD_MCA_fabric=tcp,infiniband herd_info --fabric
expect_fail "an unknown component in the selection fails"
expect_err "the error names the unknown component" '"infiniband"'
expect_no_err "no second, misleading message" "no fabric component is available"

HERD_MCA_fabric=^ucx herd_info --fabric
expect_rc "herd-info --fabric without ucx runs" 0
expect_out "tcp finds lo" "lo"
expect_out "tcp finds 127.0.0.1" "127\.0\.0\.1/8"
expect_no_out "ucx is left out" "ucx"
herd_info --fabric --parsable
expect_rc "herd-info --fabric --parsable runs" 0
expect_out "parsable fabric device" '^fabric:tcp:device:lo:kind:interface$'

# --param names and other bad input.
herd_info --param fabric nosuch
expect_fail "--param with an unknown component fails"
expect_err "the error lists the known components" "base,ofi,tcp,ucx"
herd_info --param nosuchfw all
expect_fail "--param with an unknown framework fails"
expect_err "the error lists the frameworks" "mca,fabric"
herd_info --level 12
expect_fail "--level out of range fails"
herd_info --bogus
expect_fail "an unknown option fails"
expect_err "the error names the option" "bogus"
herd_info --param fabric
expect_fail "--param with one argument fails"

# A component built for another MCA ABI version is refused, with the reason.
HERD_MCA_component_path=$HERD_BUILDDIR/test/integration/oldabi:$HERD_MCA_component_path herd_info
expect_rc "herd-info runs beside a refused component" 0
expect_err "the refused file is named" "herd_fabric_oldabi"
expect_err "the refusal gives both ABI versions" "MCA ABI version 0, but this herd uses version 1"
expect_no_out "the refused component is not listed" "MCA fabric: oldabi"

finish
