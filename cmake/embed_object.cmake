# cmake -DIN=FILE -DOUT=FILE.c -DNAME=SYMBOL -P embed_object.cmake
#
# Writes FILE's bytes as C: const unsigned char SYMBOL[] and
# const unsigned long SYMBOL_size (the build's prebuilt exe driver,
# tools/exe_driver_gen.c, carried by the dmlc command).
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR size "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n  " bytes "${bytes}")
file(WRITE "${OUT}.tmp"
  "/* Generated from ${NAME}'s object by cmake/embed_object.cmake. */\n"
  "const unsigned char ${NAME}[${size} + 1] = {\n  ${bytes}0};\n"
  "const unsigned long ${NAME}_size = ${size};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
