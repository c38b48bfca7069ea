package layout

// fastestFirst lists dimension indices from the fastest-varying one.
func fastestFirst(n int, order Order) []int {
	dims := make([]int, n)
	for i := range dims {
		if order == OrderC {
			dims[i] = n - 1 - i
		} else {
			dims[i] = i
		}
	}
	return dims
}

func checkOrder(op string, order Order) error {
	if order != OrderC && order != OrderFortran {
		return argErr(op, "order = %d is neither OrderC nor OrderFortran", int(order))
	}
	return nil
}

// Subarray is the subsizes block at starts of an array of sizes elements of
// t, stored in the given order. Its lb is 0 and its extent the whole array.
func Subarray(sizes, subsizes, starts []int, order Order, t *Type) (*Type, error) {
	const op = "subarray"
	if err := checkSubarray(op, sizes, subsizes, starts, order, t); err != nil {
		return nil, err
	}
	var b builder
	stride := t.Extent()
	var off int64
	body := t.root
	for _, d := range fastestFirst(len(sizes), order) {
		body = b.repeat(0, int64(subsizes[d]), stride, body)
		off = b.add(off, b.mul(int64(starts[d]), stride))
		stride = b.mul(stride, int64(sizes[d]))
	}
	bd := bounds{any: true, sticky: true, lb: 0, ub: stride}
	return newType(op, &b, b.shift(body, off), bd)
}

func checkSubarray(op string, sizes, subsizes, starts []int, order Order, t *Type) error {
	if err := checkType(op, "oldtype", t); err != nil {
		return err
	}
	if err := checkOrder(op, order); err != nil {
		return err
	}
	n := len(sizes)
	if n == 0 {
		return argErr(op, "ndims = 0: sizes is empty")
	}
	if len(subsizes) != n || len(starts) != n {
		return argErr(op, "slice lengths differ: %d sizes, %d subsizes, %d starts", n, len(subsizes), len(starts))
	}
	for i := range n {
		switch {
		case sizes[i] <= 0:
			return argErr(op, "sizes[%d] = %d must be positive", i, sizes[i])
		case subsizes[i] < 0:
			return argErr(op, "subsizes[%d] = %d is negative", i, subsizes[i])
		case starts[i] < 0:
			return argErr(op, "starts[%d] = %d is negative", i, starts[i])
		case starts[i] > sizes[i]-subsizes[i]:
			return argErr(op, "starts[%d] + subsizes[%d] = %d + %d exceeds sizes[%d] = %d",
				i, i, starts[i], subsizes[i], i, sizes[i])
		}
	}
	return nil
}
