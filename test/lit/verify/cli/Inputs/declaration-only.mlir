// Only a function declaration (a tt.func with an empty region): no kernel to check (exit 2).
"builtin.module"() ({
  "tt.func"() <{function_type = (i32) -> i32, sym_name = "ext", sym_visibility = "private"}> ({
  }) : () -> ()
}) {ttg.target = "cuda:100"} : () -> ()
