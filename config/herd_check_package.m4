dnl SPDX-License-Identifier: BSD-3-Clause
dnl HERD_CHECK_PACKAGE(VAR, name, pkg-config modules, header, library, function, extra-libs,
dnl                    required yes/no, debian-package)
dnl Adds --with-NAME[=DIR]. Looks in DIR (include/ and lib/ or lib64/) when given, else through
dnl pkg-config (when modules are given) and then the default search paths. Sets VAR_CFLAGS,
dnl VAR_LIBS, herd_have_VAR=yes/no and the conditional HERD_HAVE_VAR. A required package that is
dnl missing, or an optional one asked for by --with-NAME that is missing, stops configure with
dnl the Debian package to install.
AC_DEFUN([HERD_CHECK_PACKAGE], [
    AC_ARG_WITH([$2],
        [AS_HELP_STRING([--with-$2@<:@=DIR@:>@],
                        [use $2 (installed in DIR); ]m4_if([$8], [yes], [required], [optional; --without-$2 leaves out what needs it]))])
    herd_have_$1=no
    $1_CFLAGS=
    $1_LIBS=
    herd_with=$with_[]m4_translit([$2], [-], [_])
    AS_IF([test "$herd_with" = no], [
        m4_if([$8], [yes], [AC_MSG_ERROR([$2 is required and cannot be disabled with --without-$2])])
    ], [
        herd_save_CPPFLAGS=$CPPFLAGS
        herd_save_LIBS=$LIBS
        herd_save_LDFLAGS=$LDFLAGS
        AS_IF([test -n "$herd_with" && test "$herd_with" != yes], [
            AS_IF([test ! -d "$herd_with"], [AC_MSG_ERROR([--with-$2=$herd_with: no such directory])])
            $1_CFLAGS="-I$herd_with/include"
            herd_libdir="$herd_with/lib"
            AS_IF([test -d "$herd_with/lib64"], [herd_libdir="$herd_with/lib64"])
            $1_LIBS="-L$herd_libdir -Wl,-rpath,$herd_libdir"
        ], [
            m4_ifnblank([$3], [
                PKG_CHECK_EXISTS([$3], [
                    $1_CFLAGS=`$PKG_CONFIG --cflags "$3"`
                    $1_LIBS=`$PKG_CONFIG --libs "$3"`
                ])
            ])
        ])
        CPPFLAGS="$CPPFLAGS $$1_CFLAGS"
        LDFLAGS="$LDFLAGS $$1_LIBS"
        AC_CHECK_HEADER([$4], [
            AC_CHECK_LIB([$5], [$6], [herd_have_$1=yes], [], [$7 $$1_LIBS])
        ], [], [AC_INCLUDES_DEFAULT
#include <stdarg.h>
#include <setjmp.h>
])
        CPPFLAGS=$herd_save_CPPFLAGS
        LIBS=$herd_save_LIBS
        LDFLAGS=$herd_save_LDFLAGS
        AS_IF([test "$herd_have_$1" = yes], [
            AS_CASE([" $$1_LIBS "], [*" -l$5 "*], [], [$1_LIBS="$$1_LIBS -l$5 $7"])
        ], [
            $1_CFLAGS=
            $1_LIBS=
            AS_IF([test "$8" = yes || test -n "$herd_with"], [
                AC_MSG_ERROR([$2 not found (header $4, library -l$5)m4_if([$8], [yes], [; it is required]). On Debian: apt-get install $9; or point --with-$2=DIR at its installation])
            ])
        ])
    ])
    AC_SUBST([$1_CFLAGS])
    AC_SUBST([$1_LIBS])
    AM_CONDITIONAL([HERD_HAVE_$1], [test "$herd_have_$1" = yes])
])
