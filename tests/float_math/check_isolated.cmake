# The per-instruction-set float math and FFT objects share no code with the
# rest of libgraft: every symbol another object could be linked to (weak or
# unique definitions, i.e. inline functions and their statics) lives in the
# float math file's renamed Eigen namespace; the FFT files have none.
# Otherwise the linker could keep an AVX-512 copy of an inline function for a
# baseline caller (interpreter/kernels/float_math_isa.h, fft_stockham_isa.h).
# Run with -DOBJECTS="a.o;b.o;..." -DNM=nm.
set(checked 0)
foreach(obj ${OBJECTS})
  if(NOT obj MATCHES "(float_math|fft_stockham)_(baseline|avx2|avx512)\\.cpp\\.o$")
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  execute_process(COMMAND ${NM} -C ${obj} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${obj}")
  endif()
  string(REPLACE "\n" ";" lines "${symbols}")
  foreach(line ${lines})
    # DW.ref.__gxx_personality_v0 (sanitizer builds): a pointer to the C++
    # exception personality routine, the same in every object; no code.
    if(line MATCHES "^[0-9a-f]* [WVu] " AND NOT line MATCHES "graft_eigen_(baseline|avx2|avx512)::"
       AND NOT line MATCHES " DW\\.ref\\.__gxx_personality_v0$")
      message(FATAL_ERROR "${obj} shares a symbol: ${line}")
    endif()
  endforeach()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "no float math object among ${OBJECTS}")
endif()
message(STATUS "float math and FFT objects checked: ${checked}")
