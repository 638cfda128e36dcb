from pkg.service import order


def main():
    print(order("z", 3))


if __name__ == "__main__":
    main()
