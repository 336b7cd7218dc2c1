/* broken_block.cu — a template whose parameter block is not valid JSON (a trailing comma), so the
 * error must name this file and the line and column inside it. Test fixture only.
 *
 * engine:template
{
  "summary": "test fixture: broken parameter block",
  "dtypes": ["f32"],
  "params": {"BX": {"default": 16},},
  "launches": [{"kernel": "gemm", "grid": [1, 1, 1], "block": ["BX", 1, 1]}]
}
*/
