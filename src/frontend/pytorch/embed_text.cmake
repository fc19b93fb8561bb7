# Writes the text of INPUT to OUTPUT as a C++ raw string literal (the body of an initializer),
# in pieces: compilers limit the length of one literal.
file(READ ${INPUT} text)
set(out "")
string(LENGTH "${text}" length)
set(pos 0)
while(pos LESS length)
  string(SUBSTRING "${text}" ${pos} 8000 piece)
  string(APPEND out "R\"ANVIL_EMBED(${piece})ANVIL_EMBED\"\n")
  math(EXPR pos "${pos} + 8000")
endwhile()
file(WRITE ${OUTPUT} "${out}")
