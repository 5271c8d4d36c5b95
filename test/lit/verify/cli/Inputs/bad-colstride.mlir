// A TMEM encoding whose colStride is not a number: generic text keeps `!ttg.memdesc<...>` opaque, so only
// Triton's parser would reject it. Line 9 col 10 is the tmem_alloc whose type (through #tmem) is malformed.
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 64, colStride = 1x>
#tmem_space = #ttng.tensor_memory
"builtin.module"() ({
  "tt.func"() <{function_type = (i32) -> (), sym_name = "k", sym_visibility = "public"}> ({
  ^bb0(%i: i32):
    %c0 = "arith.constant"() <{value = 0 : i32}> : () -> i32 loc("k.py":3:5)
    %a = "ttng.tmem_alloc"() : () -> !ttg.memdesc<2x128x64xf32, #tmem, #tmem_space, mutable> loc("acc"("k.py":4:5))
    %b = "ttg.memdesc_index"(%a, %c0) : (!ttg.memdesc<2x128x64xf32, #tmem, #tmem_space, mutable>, i32) -> !ttg.memdesc<128x64xf32, #tmem, #tmem_space, mutable> loc("k.py":5:5)
    "tt.return"() : () -> ()
  }) : () -> ()
}) {ttg.target = "cuda:100"} : () -> ()
