/* mechsym C runtime: the names of public entry points. MS_PREFIX (defined before this file, ms_ by default)
   prefixes each: MS_FN(inverse) is ms_inverse in the library the C backend compiles and MODEL_inverse in a
   standalone export, so that several exports link into one program. Static helpers keep their own names. */
#ifndef MS_PREFIX_H
#define MS_PREFIX_H
#ifndef MS_PREFIX
#define MS_PREFIX ms_
#endif
#define MS_CAT_(a, b) a##b
#define MS_CAT(a, b) MS_CAT_(a, b)
#define MS_FN(name) MS_CAT(MS_PREFIX, name)
#endif
