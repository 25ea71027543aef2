// SPDX-License-Identifier: MIT
package tenure;

import java.util.Collections;
import java.util.List;

/** One page of a list, and where the next one starts (null at the end). */
public final class Page<T> {
    private final List<T> items;
    private final String next;

    Page(List<T> items, String next) {
        this.items = Collections.unmodifiableList(items);
        this.next = next;
    }

    public List<T> items() {
        return items;
    }

    /** The {@code after} of the next page, or null when this one is the last. */
    public String next() {
        return next;
    }
}
